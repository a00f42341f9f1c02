import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, postgresBinDir, processTree, runAs, running, signalTree, startProcess, stopProcess, waitFor } from "./process.js";

export interface RunningServer {
  url: string;
  /** The server's process id. */
  pid: number;
  stop(): Promise<void>;
}

/** A running PostgreSQL that a test may restart, crash, freeze, or cut off from its clients. */
export interface RunningPostgres extends RunningServer {
  /** The data folder (readable by root, for tests that scan it). */
  dataDir: string;
  /** A fast shutdown (SIGINT), then a start on the same port and data. */
  restart(): Promise<void>;
  /** SIGKILL to the postmaster and every backend, then a start (crash recovery) on the same port and data. */
  crash(): Promise<void>;
  /** Freezes the postmaster and every backend (SIGSTOP); `resume` thaws them. */
  pause(): void;
  resume(): void;
  /** Ends every client connection from the server's side (`pg_terminate_backend`). */
  terminateConnections(): Promise<void>;
}

const run = promisify(execFile);

/**
 * Starts a throwaway PostgreSQL: `initdb` into a temp folder, `postgres` on a free
 * loopback port (as the `postgres` user when we are root, since PostgreSQL refuses
 * root), trust authentication for a `memoria` superuser. `stop()` ends it by its own
 * process id and removes the folder. By default durability settings are relaxed
 * (`fsync=off`, `synchronous_commit=off`) because the data is thrown away; with
 * `durable: true` the server keeps PostgreSQL's defaults, so a commit it
 * acknowledged survives a kill -9 of the server (the fault suite needs that).
 * `under` puts the server's files in a folder of your choice (a small tmpfs, to fill its disk).
 */
export async function startPostgres(options: { durable?: boolean; under?: string } = {}): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  const base = mkdtempSync(join(options.under ?? tmpdir(), "memoria-pg-"));
  const user = runAs("postgres");
  if (user.uid !== undefined) chownSync(base, user.uid, user.gid as number);
  const data = join(base, "data");
  try {
    await run(join(bin, "initdb"), ["-D", data, "-U", "memoria", "--auth=trust", "--encoding=UTF8", "--locale=C", "-N"], user);
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  const port = await freePort();
  const launch = () =>
    startProcess(
      join(bin, "postgres"),
      [
        ...["-D", data, "-p", String(port), "-k", base, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300"],
        ...(options.durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
      ],
      user,
    );
  let server = launch();
  const ready = () =>
    waitFor(
      async () => {
        if (server.child.exitCode !== null) throw new Error(`postgres exited: ${server.output()}`);
        try {
          await run(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "memoria", "-d", "postgres"]);
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      () => `postgres did not accept connections on port ${port}: ${server.output()}`,
    );
  const stop = async () => {
    signalTree(server.child.pid as number, "SIGCONT"); // a frozen server could not act on SIGINT
    await stopProcess(server.child, server.exited, "SIGINT");
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }
  const psql = (sql: string) => run(join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "memoria", "-d", "postgres", "-Atc", sql]);
  return {
    url: `postgres://memoria@127.0.0.1:${port}/postgres`,
    dataDir: data,
    get pid() {
      return server.child.pid as number;
    },
    stop,
    async restart() {
      await stopProcess(server.child, server.exited, "SIGINT");
      server = launch();
      await ready();
    },
    async crash() {
      const tree = processTree(server.child.pid as number);
      signalTree(server.child.pid as number, "SIGKILL");
      await server.exited;
      // The next start needs every old backend gone (it checks the shared memory they held).
      await waitFor(
        () => tree.every((pid) => !running(pid)),
        30_000,
        () => "processes of the killed postgres did not exit",
      );
      server = launch();
      await ready();
    },
    pause() {
      signalTree(server.child.pid as number, "SIGSTOP");
    },
    resume() {
      signalTree(server.child.pid as number, "SIGCONT");
    },
    async terminateConnections() {
      await psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
    },
  };
}
