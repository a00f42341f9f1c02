/**
 * W2/W3 store by store, each store in a process of its own (latency-worker.ts), one
 * after another. In one process, every store's sessions stayed on one heap: the
 * in-memory store's 100,000-message sessions made each later full collection longer,
 * and whichever contender met one paid for it; and all stores' rows shared one JIT's
 * type feedback. A store's process holds only its own sessions and code.
 */
import { fork } from "node:child_process";
import type { LatencyResult } from "./latency.js";
import { type StoreKind, fileKind, memoryKind, mongoKind, mysqlKind, postgresKind, redisKind, sqliteKind } from "./systems.js";
import { workerScript } from "./worker-script.js";
import type { Settings } from "./workloads.js";

export interface ServerUrls {
  postgres: string;
  /** MariaDB or MySQL; the quick run starts none. */
  mysql?: string;
  redis: string;
  mongo: string;
  /** A real mongod (MONGODB_URL) rather than the compatible test server. */
  realMongo: boolean;
}

export interface LatencyJob {
  settings: Settings;
  urls: ServerUrls;
}

/** The store kinds a run measures, in report order. */
export const KIND_NAMES = ["in-memory", "file", "sqlite", "postgres", "mysql", "redis", "mongodb"] as const;

/** The kinds this run has servers for, in report order. */
export const kindNames = (urls: ServerUrls) => KIND_NAMES.filter((name) => name !== "mysql" || urls.mysql !== undefined);

export async function openKind(name: string, urls: ServerUrls): Promise<StoreKind> {
  switch (name) {
    case "in-memory":
      return memoryKind();
    case "file":
      return fileKind();
    case "sqlite":
      return sqliteKind();
    case "postgres":
      return postgresKind(urls.postgres);
    case "mysql":
      if (!urls.mysql) throw new Error("no MySQL server in this run");
      return mysqlKind(urls.mysql);
    case "redis":
      return redisKind(urls.redis);
    case "mongodb":
      return mongoKind(urls.mongo, urls.realMongo);
    default:
      throw new Error(`no store kind named ${JSON.stringify(name)}`);
  }
}

export async function closeKind(kind: StoreKind): Promise<void> {
  await Promise.all([kind.memoria.close(), kind.langchain?.close(), kind.bare?.close()]);
}

export async function latencyInProcesses(names: readonly string[], job: LatencyJob, log: (line: string) => void): Promise<LatencyResult> {
  const all: LatencyResult = { points: [], flatness: [] };
  for (const name of names) {
    const { points, flatness } = await inProcess(name, job, log);
    all.points.push(...points);
    all.flatness.push(...flatness);
  }
  return all;
}

async function inProcess(name: string, job: LatencyJob, log: (line: string) => void): Promise<LatencyResult> {
  const child = fork(await workerScript("latency-worker"), [name], {
    stdio: "inherit",
    execArgv: [],
    env: { ...process.env, MEMORIA_BENCH_LATENCY: JSON.stringify(job) },
  });
  return new Promise((resolve, reject) => {
    child.on("message", (message: { log?: string; result?: LatencyResult }) => {
      if (message.log !== undefined) log(message.log);
      if (message.result) {
        resolve(message.result);
        // Done: a store's handle left open must not keep the worker (or the bench) alive.
        setTimeout(() => child.kill(), 10_000).unref();
      }
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the W2/W3 process for ${name} exited (${code}) before its result`)));
  });
}
