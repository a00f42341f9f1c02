import { execFile } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RunningPostgres } from "./postgres.js";
import { freePort, runAs, signalTree, startProcess, stopProcess, waitFor, which } from "./process.js";

/** A running MariaDB that a test may restart, crash, freeze, or cut off from its clients (as `RunningPostgres`). */
export type RunningMariadb = RunningPostgres;

const run = promisify(execFile);
const HINT = "Install it (apt-get install mariadb-server) or set MYSQL_URL to an existing server.";

/** `mariadbd` lives in /usr/sbin on Debian, which is not on every PATH. */
function serverBinary(): string {
  return existsSync("/usr/sbin/mariadbd") ? "/usr/sbin/mariadbd" : which("mariadbd", HINT);
}

export interface MariadbOptions {
  /** Keep InnoDB's flush-on-commit defaults, so an acknowledged commit survives a kill -9. */
  durable?: boolean;
  /** The folder the server's files go in (a small tmpfs, to fill its disk). @default the system's temp folder */
  under?: string;
  /** InnoDB's redo log size, e.g. `"4M"` where the disk is small. @default the server's */
  logFileSize?: string;
}

/**
 * Starts a throwaway MariaDB (a real MySQL-compatible server): `mariadb-install-db`
 * into a temp folder, `mariadbd` on a free loopback port (as the `mysql` user when we
 * are root), with no grant checks, and a `memoria` database. `stop()` ends it by its
 * own process id and removes the folder. By default commits are not flushed to disk,
 * since the data is thrown away; with `durable: true` the server keeps InnoDB's
 * defaults, so a commit it acknowledged survives a kill -9 (the fault suite needs that).
 */
export async function startMariadb(options: MariadbOptions = {}): Promise<RunningMariadb> {
  const server = serverBinary();
  const base = mkdtempSync(join(options.under ?? tmpdir(), "memoria-mariadb-"));
  const user = runAs("mysql");
  if (user.uid !== undefined) chownSync(base, user.uid, user.gid as number);
  const data = join(base, "data");
  // Temporary tables in a folder of its own, not the shared /tmp: a full test run once
  // saw a bootstrap's temporary table file vanish there, and the install fail.
  const scratch = join(base, "tmp");
  mkdirSync(scratch);
  if (user.uid !== undefined) chownSync(scratch, user.uid, user.gid as number);
  const asUser = user.uid !== undefined ? ["--user=mysql"] : [];
  const logSize = options.logFileSize ? [`--innodb-log-file-size=${options.logFileSize}`] : [];
  try {
    await run(
      which("mariadb-install-db", HINT),
      ["--no-defaults", `--datadir=${data}`, `--tmpdir=${scratch}`, "--skip-test-db", "--auth-root-authentication-method=normal", ...logSize, ...asUser],
      user,
    );
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw new Error(`mariadb-install-db failed: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  const port = await freePort();
  const launch = () =>
    startProcess(
      server,
      [
        "--no-defaults",
        `--datadir=${data}`,
        `--tmpdir=${scratch}`,
        `--socket=${join(base, "mariadb.sock")}`,
        `--pid-file=${join(base, "mariadb.pid")}`,
        `--port=${port}`,
        "--bind-address=127.0.0.1",
        "--skip-grant-tables",
        "--skip-name-resolve",
        "--max-connections=300",
        "--max-allowed-packet=64M",
        "--innodb-buffer-pool-size=128M",
        ...(options.durable ? [] : ["--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0"]),
        ...logSize,
      ],
      user,
    );
  let child = launch();
  const client = (sql: string) => run(which("mariadb", HINT), ["--protocol=tcp", "-h", "127.0.0.1", "-P", String(port), "-u", "root", "-N", "-B", "-e", sql]);
  const ready = () =>
    waitFor(
      async () => {
        if (child.child.exitCode !== null) throw new Error(`mariadbd exited: ${child.output()}`);
        try {
          await client("SELECT 1");
          return true;
        } catch {
          return false;
        }
      },
      60_000,
      () => `mariadbd did not accept connections on port ${port}: ${child.output()}`,
    );
  const stop = async () => {
    signalTree(child.child.pid as number, "SIGCONT"); // a frozen server could not act on SIGTERM
    await stopProcess(child.child, child.exited, "SIGTERM", 30_000);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await ready();
    await client("CREATE DATABASE IF NOT EXISTS memoria");
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `mysql://root@127.0.0.1:${port}/memoria`,
    dataDir: data,
    get pid() {
      return child.child.pid as number;
    },
    stop,
    async restart() {
      await stopProcess(child.child, child.exited, "SIGTERM", 30_000);
      child = launch();
      await ready();
    },
    async crash() {
      signalTree(child.child.pid as number, "SIGKILL");
      await child.exited;
      child = launch();
      await ready();
    },
    pause() {
      signalTree(child.child.pid as number, "SIGSTOP");
    },
    resume() {
      signalTree(child.child.pid as number, "SIGCONT");
    },
    async terminateConnections() {
      const { stdout } = await client("SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND command NOT IN ('Daemon', 'Binlog Dump')");
      const ids = stdout.split("\n").filter((line) => /^\d+$/.test(line.trim()));
      // One at a time: a connection that ended meanwhile fails its KILL alone.
      for (const id of ids) await client(`KILL CONNECTION ${id.trim()}`).catch(() => undefined);
    },
  };
}
