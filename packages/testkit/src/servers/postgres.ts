import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, postgresBinDir, runAs, startProcess, stopProcess, waitFor } from "./process.js";

export interface RunningServer {
  url: string;
  /** The server's process id. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL: `initdb` into a temp folder, `postgres` on a free
 * loopback port (as the `postgres` user when we are root, since PostgreSQL refuses
 * root), trust authentication for a `memoria` superuser. `stop()` ends it by its own
 * process id and removes the folder. Durability settings are relaxed (`fsync=off`)
 * because the data is thrown away; behaviour is otherwise that of a real server.
 */
export async function startPostgres(): Promise<RunningServer> {
  const bin = postgresBinDir();
  const base = mkdtempSync(join(tmpdir(), "memoria-pg-"));
  const user = runAs("postgres");
  if (user.uid !== undefined) chownSync(base, user.uid, user.gid as number);
  const data = join(base, "data");
  const run = promisify(execFile);
  try {
    await run(join(bin, "initdb"), ["-D", data, "-U", "memoria", "--auth=trust", "--encoding=UTF8", "--locale=C", "-N"], user);
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  const port = await freePort();
  const server = startProcess(
    join(bin, "postgres"),
    ["-D", data, "-p", String(port), "-k", base, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300"],
    user,
  );
  const stop = async () => {
    await stopProcess(server.child, server.exited, "SIGINT");
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (server.child.exitCode !== null) throw new Error(`postgres exited: ${server.output()}`);
        try {
          await run(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "memoria", "-d", "postgres"]);
          return true;
        } catch {
          return false;
        }
      },
      30_000,
      () => `postgres did not accept connections on port ${port}: ${server.output()}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://memoria@127.0.0.1:${port}/postgres`, pid: server.child.pid as number, stop };
}
