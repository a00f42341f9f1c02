import { randomBytes } from "node:crypto";
import { statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, MemoriaError, RunnableWithMessageHistory } from "@memoria/core";
import { expect } from "vitest";
import { running } from "./servers/process.js";

/** A server whose data folder is on a small disk, and the store talking to it. */
export interface ServerOnSmallDisk {
  /** Shown in the report line, e.g. `"postgres"`. */
  name: string;
  store: HistoryStore;
  /** The server's process, to tell whether the full disk stopped it. */
  readonly pid: number;
  /** Starts the server again on the same data, once it stopped. */
  startAgain(): Promise<void>;
  /** Besides at its save, the failing turn may be refused at its start, when its lock is taken (a server refusing every write). */
  mayRefuseAtStart?: boolean;
  /** What the failure's message says, where the test knows. */
  message?: RegExp;
}

/** What the file system under `path` has left for a file, in bytes. */
function freeBytes(path: string): number {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
}

/**
 * A server's disk filled under a conversation: a filler takes all but 3 MB of the
 * disk at `diskPath`, then turns of about 60 KB of random text (a server may compress
 * repeated text) run until one fails. That turn must reject with a typed error whose
 * outcome is true to what the server kept; once the filler is gone (and a server that
 * stopped is started again) every turn that resolved is there, and the next turn works.
 * Prints what happened, as the fault suite does.
 */
export async function expectFullDiskSurvived(diskPath: string, server: ServerOnSmallDisk): Promise<void> {
  const { store } = server;
  const filler = join(diskPath, "filler");
  writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(diskPath) - 3 * 1024 * 1024)));
  const chain = new RunnableWithMessageHistory({ store, lockOptions: { ttlMs: 5_000 }, runnable: RunnableLambda.from(() => "ok") });
  const config = { configurable: { sessionId: "full" } };
  let resolved = 0;
  let failure: unknown;
  for (let i = 0; i < 200 && !failure; i++) {
    await chain.invoke(`turn ${i} ${randomBytes(45_000).toString("base64")}`, config).then(
      () => resolved++,
      (error: unknown) => {
        failure = error;
      },
    );
  }
  expect(resolved).toBeGreaterThan(0);
  const atSave = MemoriaError.hasCode(failure, "SAVE_FAILED");
  if (!server.mayRefuseAtStart) expect(failure).toMatchObject({ code: "SAVE_FAILED" });
  const cause = atSave ? (failure as { cause: unknown }).cause : failure;
  expect(cause).toMatchObject({ code: "STORE_UNAVAILABLE" });
  const message = (cause as Error).message;
  if (server.message) expect(message).toMatch(server.message);
  const { outcome } = failure as { outcome: string };
  expect(["not-stored", "unknown"]).toContain(outcome);

  unlinkSync(filler);
  const died = !running(server.pid);
  if (died) await server.startAgain();
  console.log(`${server.name} on a full disk: ${resolved} turns stored, then ${outcome} (${message.slice(0, 90)}); the server ${died ? "died" : "lived"}`);
  const stored = await store.count({ sessionId: "full" });
  // Every resolved turn is there; the failed one only if its outcome said it might be.
  expect(outcome === "not-stored" ? [2 * resolved] : [2 * resolved, 2 * resolved + 2]).toContain(stored);
  await expect(chain.invoke("small again", config)).resolves.toBe("ok");
  expect(await store.count({ sessionId: "full" })).toBe(stored + 2);
}
