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
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, with the same data folder. */
  restart(): Promise<void>;
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

/** Starts a throwaway redis-server on a free loopback port, durable across kill/restart. */
export async function startRedis(extra: string[] = []): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), "memoria-redis-"));
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
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return server.child.pid as number;
    },
    async kill() {
      await stopProcess(server.child, server.exited, "SIGKILL");
    },
    async restart() {
      server = launch(port, dir, extra);
      await ready();
    },
    async stop() {
      await stopProcess(server.child, server.exited, "SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunningCluster {
  /** host:port of every master. */
  nodes: { host: string; port: number }[];
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
    await waitFor(
      async () => {
        const states = await Promise.all(
          servers.map(async (s) => (await run("redis-cli", ["-p", String(s.port), "CLUSTER", "INFO"])).stdout.includes("cluster_state:ok")),
        );
        return states.every(Boolean);
      },
      30_000,
      () => "the cluster did not reach cluster_state:ok",
    );
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    throw error;
  }
  return {
    nodes: servers.map((s) => ({ host: "127.0.0.1", port: s.port })),
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

/**
 * A Redis Sentinel on a free loopback port watching the master at `masterPort`
 * under the name `mymaster` (quorum 1); ready once it reports the master's address.
 */
export async function startRedisSentinel(masterPort: number, name = "mymaster"): Promise<RunningServer & { port: number; name: string }> {
  const dir = mkdtempSync(join(tmpdir(), "memoria-sentinel-"));
  const port = await freePort();
  const config = join(dir, "sentinel.conf");
  writeFileSync(config, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${name} 127.0.0.1 ${masterPort} 1\nsentinel down-after-milliseconds ${name} 5000\n`);
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
