import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { BaseMessage } from "@langchain/core/messages";
import type { SoakMessage, SoakStart, SoakWorkerConfig } from "./soak-worker.js";

const WORKER = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "./soak-worker.ts" : "./soak-worker.js", import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SoakOptions {
  /** A module exporting `createStore(target)` (and `langchainHistory(target, sessionId)` for `system: "langchain"`), loaded by the workers through tsx. */
  storeModule: string;
  target: string;
  /** Worker processes. */
  workers: number;
  /** Sessions, each taken turns on by every worker at once (so turns of one session contend across processes). */
  sessions: number;
  durationMs: number;
  /** Session ids start with this (a run's own). */
  prefix: string;
  /** @default "memoria" */
  system?: "memoria" | "langchain";
  /** Restarts the server, a third of the way through; left out where there is none (SQLite). */
  restart?: () => Promise<void>;
  /** SIGKILLs a worker half way through and starts another in its place. @default true */
  killWorker?: boolean;
  /** The stored messages of a session, for the audit. */
  read(sessionId: string): Promise<BaseMessage[]>;
  /** Time windows the report is cut into. @default 6 */
  windows?: number;
  /** How long the workers may take to load and open their stores before the run starts. @default 120_000 */
  startTimeoutMs?: number;
}

/** One slice of a run's time. */
export interface SoakWindow {
  /** Seconds from the start. */
  from: number;
  to: number;
  turns: number;
  /** Turn latency (ms) of turns that resolved in the window, a failed attempt's retries included. */
  p50: number;
  p99: number;
  /** Heap used by the largest live worker, at the window's end (MB): comparable however many workers were up. */
  heapMB: number;
  /** Open file descriptors of the live worker holding most, at the window's end. */
  fds: number;
}

export interface SoakReport {
  turns: number;
  /** Turns resolved per second over the run. */
  throughput: number;
  windows: SoakWindow[];
  /** The run's first and second halves (a two-minute run's first minute and last). */
  halves: [SoakWindow, SoakWindow];
  /** Turns that resolved but are not stored. */
  lost: number;
  /** Turns stored more than once. */
  doubled: number;
  /** Turns of one writer stored out of the order it took them, or a question not followed by its answer. */
  misordered: number;
  /** Calls that rejected (and were tried again), and how many of those were not typed memoria errors. */
  failedCalls: number;
  untypedErrors: number;
  /** What was done to the run: `restart` of the server, `kill` of a worker. */
  faults: string[];
}

interface Worker {
  child: ChildProcess;
  /** Resolves once the worker has opened its store and waits for the start. */
  ready: Promise<void>;
  exited: Promise<void>;
  heapUsed: number;
  fds: number;
  alive: boolean;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

/**
 * Sustained load: `workers` processes × `sessions` sessions, every worker taking turns
 * on every session for `durationMs`, a server restart a third of the way and a worker
 * killed with SIGKILL half way (another takes its place); then an audit of every
 * stored session against every turn that resolved. The report gives throughput,
 * latency, heap and descriptors over time, and what was lost, doubled or misordered.
 * The run's clock starts once every worker has opened its store: on a loaded machine
 * loading the modules can take longer than a short run.
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  let start: SoakStart | undefined;
  const sessions = Array.from({ length: options.sessions }, (_, i) => `${options.prefix}-s${i}`);
  const acks: { session: string; writer: string; seq: number; ms: number; at: number }[] = [];
  const samples: { at: number; heapMB: number; fds: number }[] = [];
  let failedCalls = 0;
  let untypedErrors = 0;
  let errors = "";
  const faults: string[] = [];
  const workers: Worker[] = [];

  function startWorker(writer: string): Worker {
    const config: SoakWorkerConfig = { writer, sessions, system: options.system ?? "memoria" };
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, options.storeModule, options.target, JSON.stringify(config)], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const ready = new Promise<void>((resolve, reject) => {
      child.on("message", (message: SoakMessage) => {
        if (!("ready" in message)) return;
        if (start) child.send(start); // a worker started in another's place joins the run under way
        resolve();
      });
      void exited.then(() => reject(new Error(`soak worker ${writer} ended before it was ready: ${errors}`)));
    });
    ready.catch(() => undefined); // awaited for the first workers only; a late one's failure is the exit check's
    const worker: Worker = { child, ready, exited, heapUsed: 0, fds: 0, alive: true };
    child.stderr?.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-4_000);
    });
    child.on("message", (message: SoakMessage) => {
      if ("ack" in message) acks.push({ ...message.ack, writer });
      else if ("sample" in message) {
        worker.heapUsed = message.sample.heapUsed;
        worker.fds = message.sample.fds;
      } else if ("failure" in message) {
        failedCalls++;
        if (!message.failure.typed) untypedErrors++;
      }
    });
    void worker.exited.then(() => {
      worker.alive = false;
    });
    workers.push(worker);
    return worker;
  }

  for (let i = 0; i < options.workers; i++) startWorker(`w${i}`);
  const startTimeoutMs = options.startTimeoutMs ?? 120_000;
  let waited: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      Promise.all(workers.map((w) => w.ready)),
      new Promise((_, reject) => {
        waited = setTimeout(() => reject(new Error(`the soak workers were not ready within ${startTimeoutMs} ms: ${errors}`)), startTimeoutMs);
      }),
    ]);
  } catch (error) {
    for (const w of workers) w.child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(waited);
  }
  const started = Date.now();
  const deadline = started + options.durationMs;
  start = { deadline };
  for (const w of workers) w.child.send(start);
  const sampler = setInterval(() => {
    const live = workers.filter((w) => w.alive && w.fds > 0);
    samples.push({ at: Date.now(), heapMB: Math.max(0, ...live.map((w) => w.heapUsed)) / 2 ** 20, fds: Math.max(0, ...live.map((w) => w.fds)) });
  }, 1_000);
  try {
    const faulting = (async () => {
      if (options.restart) {
        await sleep(options.durationMs / 3);
        await options.restart();
        faults.push("restart");
      }
      if (options.killWorker !== false && options.workers > 0) {
        await sleep(Math.max(0, started + options.durationMs / 2 - Date.now()));
        const victim = workers[workers.length > 1 ? 1 : 0] as Worker;
        victim.child.kill("SIGKILL");
        await victim.exited;
        faults.push("kill");
        startWorker("w1b");
      }
    })();
    await faulting;
    // A worker sees its last turn through a fault for up to 30 s past the deadline, then stops.
    const ended = await Promise.race([Promise.all(workers.map((w) => w.exited)).then(() => true), sleep(options.durationMs + 60_000).then(() => false)]);
    if (!ended) throw new Error(`a soak worker did not stop a minute after its deadline: ${errors}`);
  } finally {
    clearInterval(sampler);
    for (const w of workers) if (w.alive) w.child.kill("SIGKILL");
  }
  const killed = faults.includes("kill") ? 1 : 0;
  const exitedBadly = workers.filter((w) => w.child.exitCode !== 0 && w.child.signalCode !== "SIGKILL");
  if (exitedBadly.length > 0 || workers.filter((w) => w.child.signalCode === "SIGKILL").length > killed) {
    throw new Error(`a soak worker failed: ${errors}`);
  }

  const audit = await auditSessions(sessions, acks, options.read);
  const window = (from: number, to: number): SoakWindow => {
    const inside = acks
      .filter((a) => a.at >= from && a.at < to)
      .map((a) => a.ms)
      .sort((a, b) => a - b);
    const last = samples.filter((s) => s.at < to && s.fds > 0).at(-1);
    return {
      from: (from - started) / 1000,
      to: (to - started) / 1000,
      turns: inside.length,
      p50: percentile(inside, 0.5),
      p99: percentile(inside, 0.99),
      heapMB: last?.heapMB ?? 0,
      fds: last?.fds ?? 0,
    };
  };
  const count = options.windows ?? 6;
  // The run's own time: to the deadline, or the last turn seen through past it; not the wait for the workers to exit, nor the audit.
  const end = Math.max(deadline, (acks.at(-1)?.at ?? deadline) + 1);
  const span = (end - started) / count;
  const windows = Array.from({ length: count }, (_, i) => window(started + i * span, started + (i + 1) * span));
  const middle = started + (end - started) / 2;
  return {
    turns: acks.length,
    throughput: acks.length / (options.durationMs / 1000),
    windows,
    halves: [window(started, middle), window(middle, end)],
    ...audit,
    failedCalls,
    untypedErrors,
    faults,
  };
}

/** Checks every stored session against the turns that resolved: each stored once, in its writer's order, its answer after it, none missing. */
async function auditSessions(
  sessions: string[],
  acks: { session: string; writer: string; seq: number }[],
  read: (sessionId: string) => Promise<BaseMessage[]>,
): Promise<{ lost: number; doubled: number; misordered: number }> {
  let lost = 0;
  let doubled = 0;
  let misordered = 0;
  for (const session of sessions) {
    const messages = await read(session);
    const stored = new Set<string>();
    const lastSeq = new Map<string, number>();
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i] as BaseMessage;
      if (message.getType() !== "human") continue;
      const text = String(message.content);
      const next = messages[i + 1];
      if (next?.getType() !== "ai" || String(next.content) !== `ok ${text}`) misordered++;
      if (stored.has(text)) {
        doubled++;
        continue;
      }
      stored.add(text);
      const [writer, seqText] = text.split("/") as [string, string];
      const seq = Number(seqText);
      if ((lastSeq.get(writer) ?? -1) >= seq) misordered++;
      lastSeq.set(writer, seq);
    }
    for (const ack of acks) if (ack.session === session && !stored.has(`${ack.writer}/${ack.seq}`)) lost++;
  }
  return { lost, doubled, misordered };
}
