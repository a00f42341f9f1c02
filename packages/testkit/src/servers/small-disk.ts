import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A tiny file system of its own, to fill up: a tmpfs of `bytes`, or the reason none could be mounted. */
export type SmallDisk = { path: string; unmount(): Promise<void> } | { refused: string };

/**
 * Mounts a tmpfs of `bytes` in a new temp folder (needs root, as on CI and these
 * machines), so a test can fill a real disk. Where mounting is refused, says why
 * instead, for the test to skip with that reason.
 */
export async function mountSmallDisk(bytes: number): Promise<SmallDisk> {
  const path = mkdtempSync(join(tmpdir(), "memoria-small-disk-"));
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", path]);
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return { refused: `mounting a ${bytes}-byte tmpfs was refused: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}` };
  }
  return {
    path,
    async unmount() {
      await run("umount", ["-l", path]).catch(() => undefined);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `body` on a fresh tmpfs of `bytes`, unmounting it afterwards; where mounting
 * is refused, calls `skip` with the reason instead (a test's `context.skip`).
 */
export async function onSmallDisk(bytes: number, skip: (reason: string) => void, body: (path: string) => Promise<void>): Promise<void> {
  const disk = await mountSmallDisk(bytes);
  if ("refused" in disk) return skip(disk.refused);
  try {
    await body(disk.path);
  } finally {
    await disk.unmount();
  }
}
