import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RunningServer } from "./postgres.js";
import { freePort, startProcess, stopProcess, waitFor, which } from "./process.js";

const run = promisify(execFile);
const HINT = "Install it (apt-get install redis-server) or set REDIS_URL to an existing server.";

/** A running redis-server that can be killed and started again on the same port and data. */
export interface RunningRedis extends RunningServer {
  port: number;
  /** The folder holding its append-only file. */
  dir: string;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, with the same data folder. */
  restart(): Promise<void>;
  /** Stops it cleanly (SIGTERM) and starts it again. */
  restartGracefully(): Promise<void>;
  /** Kills it (SIGKILL) and starts it again. */
  crash(): Promise<void>;
  /** Freezes it (SIGSTOP), as a hung host would; `resume` thaws it. */
  pause(): void;
  resume(): void;
  /** Closes every client connection from the server's side (`CLIENT KILL TYPE normal`). */
  terminateConnections(): Promise<void>;
}

async function ping(port: number): Promise<boolean> {
  try {
    const { stdout } = await run(which("redis-cli", HINT), ["-h", "127.0.0.1", "-p", String(port), "PING"]);
    return stdout.trim() === "PONG";
  } catch {
    return false;
  }
}

function launch(port: number, dir: string, extra: string[]) {
  // Every write fsynced to the append-only file, so a killed server loses nothing it acknowledged.
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always", ...extra];
  return startProcess(which("redis-server", HINT), args);
}

/**
 * Starts a throwaway redis-server on a free loopback port, durable across kill/restart;
 * `under` puts its data folder in a folder of your choice (a small tmpfs, to fill its disk).
 */
export async function startRedis(extra: string[] = [], options: { under?: string } = {}): Promise<RunningRedis> {
  const dir = mkdtempSync(join(options.under ?? tmpdir(), "memoria-redis-"));
  const port = await freePort();
  let server = launch(port, dir, extra);
  const ready = () =>
    waitFor(
      async () => {
        if (server.child.exitCode !== null) throw new Error(`redis-server exited: ${server.output()}`);
        return ping(port);
      },
      20_000,
      () => `redis-server did not answer on port ${port}: ${server.output()}`,
    );
  await ready();
  const relaunch = async () => {
    server = launch(port, dir, extra);
    await ready();
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return server.child.pid as number;
    },
    async kill() {
      await stopProcess(server.child, server.exited, "SIGKILL");
    },
    restart: relaunch,
    async restartGracefully() {
      await stopProcess(server.child, server.exited, "SIGTERM");
      await relaunch();
    },
    async crash() {
      await stopProcess(server.child, server.exited, "SIGKILL");
      await relaunch();
    },
    pause() {
      server.child.kill("SIGSTOP");
    },
    resume() {
      server.child.kill("SIGCONT");
    },
    async terminateConnections() {
      await run(which("redis-cli", HINT), ["-h", "127.0.0.1", "-p", String(port), "CLIENT", "KILL", "TYPE", "normal"]);
    },
    async stop() {
      server.child.kill("SIGCONT"); // a frozen server could not act on SIGTERM
      await stopProcess(server.child, server.exited, "SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunningCluster {
  /** host:port of every master. */
  nodes: { host: string; port: number }[];
  /** The masters themselves, to restart, crash or freeze. */
  servers: RunningRedis[];
  /** Resolves once every node reports cluster_state:ok again. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster of `masters` redis-server processes on free loopback ports,
 * joined with `redis-cli --cluster create`, ready once every slot is served.
 */
export async function startRedisCluster(masters = 3): Promise<RunningCluster> {
  const servers: RunningRedis[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(await startRedis(["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"]));
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    await run(which("redis-cli", HINT), ["--cluster", "create", ...addresses, "--cluster-replicas", "0", "--cluster-yes"]);
    await clusterReady(servers);
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return {
    nodes: servers.map((s) => ({ host: "127.0.0.1", port: s.port })),
    servers,
    ready: () => clusterReady(servers),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

function clusterReady(servers: RunningRedis[]): Promise<void> {
  return waitFor(
    async () => {
      const states = await Promise.all(
        servers.map(async (s) =>
          (await run("redis-cli", ["-p", String(s.port), "CLUSTER", "INFO"]).catch(() => ({ stdout: "" }))).stdout.includes("cluster_state:ok"),
        ),
      );
      return states.every(Boolean);
    },
    30_000,
    () => "the cluster did not reach cluster_state:ok",
  );
}

/**
 * A Redis Sentinel on a free loopback port watching the master at `masterPort`
 * under the name `mymaster` (quorum 1); ready once it reports the master's address.
 */
export async function startRedisSentinel(masterPort: number, name = "mymaster"): Promise<RunningServer & { port: number; name: string }> {
  const dir = mkdtempSync(join(tmpdir(), "memoria-sentinel-"));
  const port = await freePort();
  const config = join(dir, "sentinel.conf");
  writeFileSync(
    config,
    `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${name} 127.0.0.1 ${masterPort} 1\nsentinel down-after-milliseconds ${name} 5000\n`,
  );
  const server = startProcess(which("redis-server", HINT), [config, "--sentinel"]);
  const stop = async () => {
    await stopProcess(server.child, server.exited, "SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (server.child.exitCode !== null) throw new Error(`redis sentinel exited: ${server.output()}`);
        try {
          const { stdout } = await run(which("redis-cli", HINT), ["-h", "127.0.0.1", "-p", String(port), "SENTINEL", "get-master-addr-by-name", name]);
          return stdout.includes(String(masterPort));
        } catch {
          return false;
        }
      },
      20_000,
      () => `redis sentinel did not report ${name}: ${server.output()}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `sentinel://127.0.0.1:${port}/${name}`, pid: server.child.pid as number, port, name, stop };
}
