import { type ChildProcess, fork } from "node:child_process";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory as LangChainWrapper } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { windowMemory } from "@memoria/memory";
import { median, shuffler } from "./measure.js";
import { trivialModel } from "./systems.js";
import { workerScript } from "./worker-script.js";

// ---------- W1: the wrapper's own cost per turn ----------

export interface WrapperCost {
  workload: string;
  /** The default: the whole history, from an in-memory store of frozen messages. */
  memoria: number;
  /** The whole history, from an in-memory store created with `frozen: false` (a copy per message per read). */
  memoriaCopies: number;
  memoriaWindow: number;
  langchain: number;
  /** The same model called by hand with the history kept in an array: what a turn costs without any wrapper. */
  bare: number;
  /**
   * memoria's turn ÷ LangChain's, and each memoria variant's wrapper cost (its turn less
   * the by-hand turn) ÷ LangChain's: the median over rounds of each round's ratio.
   */
  ratios: { turn: number; cost: number; copiesCost: number; windowCost: number };
}

/** A wrapper's cost over LangChain's: each less the by-hand turn (never below 0). */
const costRatio = (turn: number, langchain: number, bare: number) => Math.max(0, turn - bare) / Math.max(0, langchain - bare);

export const W1_CONTENDERS = ["memoria", "memoriaCopies", "memoriaWindow", "langchain", "bare"] as const;
export type W1Contender = (typeof W1_CONTENDERS)[number];

type Invoke = (input: BaseMessage[], config: { configurable: { sessionId: string } }) => Promise<unknown>;

/** One sample of a contender: `turns` turns in each of `sessions` sessions, from empty. */
export function wrapperWorkload(name: W1Contender, sessions: number, turns: number): () => Promise<void> {
  const drive = async (invoke: Invoke) => {
    for (let s = 0; s < sessions; s++) {
      for (let t = 0; t < turns; t++) await invoke([new HumanMessage("hello there")], { configurable: { sessionId: `s${s}` } });
    }
  };
  const memoria = (options: Parameters<typeof createInMemoryStore>[0], memory?: ReturnType<typeof windowMemory>) => () => {
    const chain = new RunnableWithMessageHistory({ runnable: trivialModel, store: createInMemoryStore({ maxSessions: 100_000, ...options }), memory });
    return drive((i, c) => chain.invoke(i, c));
  };
  const workloads: Record<W1Contender, () => Promise<void>> = {
    memoria: memoria({}),
    memoriaCopies: memoria({ frozen: false }),
    memoriaWindow: memoria({}, windowMemory({ k: 10 })),
    langchain: () => {
      const histories = new Map<string, InMemoryChatMessageHistory>();
      const chain = new LangChainWrapper({
        runnable: trivialModel,
        getMessageHistory: (id: string) => {
          if (!histories.has(id)) histories.set(id, new InMemoryChatMessageHistory());
          return histories.get(id) as InMemoryChatMessageHistory;
        },
      });
      return drive((i, c) => chain.invoke(i, c));
    },
    bare: () => {
      const histories = new Map<string, BaseMessage[]>();
      return drive(async (input, config) => {
        const id = config.configurable.sessionId;
        const history = histories.get(id) ?? (histories.set(id, []).get(id) as BaseMessage[]);
        const output = await trivialModel.invoke([...history, ...input]);
        history.push(...input, output);
      });
    },
  };
  return workloads[name];
}

/** A contender in a process of its own (wrapper-worker.ts): `sample()` runs its workload once and resolves with the milliseconds it took there. */
interface Worker {
  sample(): Promise<number>;
  stop(): void;
}

async function startWorker(name: W1Contender, sessions: number, turns: number): Promise<Worker> {
  const child: ChildProcess = fork(await workerScript("wrapper-worker"), [name, String(sessions), String(turns)], { stdio: "inherit", execArgv: [] });
  let pending: { done(ms: number): void; fail(error: Error): void } | undefined;
  return new Promise((resolve, reject) => {
    // A worker that fails before it is ready fails the start; one that dies later fails the sample it was running.
    const failed = (error: Error) => {
      reject(error);
      pending?.fail(error);
      pending = undefined;
    };
    child.once("error", failed);
    child.once("exit", (code) => failed(new Error(`the W1 worker for ${name} exited (${code})`)));
    child.on("message", (message: unknown) => {
      if (message === "ready") {
        resolve({
          sample: () =>
            new Promise<number>((done, fail) => {
              pending = { done, fail };
              child.send("run");
            }),
          stop: () => child.kill(),
        });
      } else if (typeof message === "number") {
        pending?.done(message);
        pending = undefined;
      }
    });
  });
}

/** `processes` workers per contender, in W1_CONTENDERS' order; if any fails to start, the others are stopped. */
async function startWorkers(sessions: number, turns: number, processes: number): Promise<Worker[]> {
  const names = W1_CONTENDERS.flatMap((name) => Array.from({ length: processes }, () => name));
  const started = await Promise.allSettled(names.map((name) => startWorker(name, sessions, turns)));
  const workers = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failure = started.find((result) => result.status === "rejected");
  if (failure) {
    for (const worker of workers) worker.stop();
    throw failure.reason;
  }
  return workers;
}

/** Runs `worker` untimed until its own samples add up to `ms` (at least one). */
async function warmUp(worker: Worker, ms: number): Promise<void> {
  for (let spent = 0; spent <= ms; ) spent += await worker.sample();
}

/**
 * Per-turn milliseconds of `turns` turns spread over `sessions` sessions, in memory,
 * with a trivial model. Each contender runs in processes of its own, so none runs
 * with the others' type feedback in the same JIT (a program runs one wrapper, not
 * five); the samples are interleaved across the processes, one at a time, each round
 * in a new order, after each has run untimed for a second (at least one round), so
 * every contender is measured with its code optimized, as a running server's is:
 * after one round, memoria's second workload still took 1.5x its later ones. The full
 * run gives each contender three processes and pools their samples: how fast one
 * process runs the same code varies from process to process (memoria's default took
 * 47 to 77 µs a turn in four runs of one build), and one process a contender measured
 * only that process's luck.
 */
export async function wrapperCost(settings: { quick: boolean }): Promise<WrapperCost[]> {
  const shapes = settings.quick
    ? [[10, 10]]
    : [
        [1, 2_000],
        [1_000, 5],
      ];
  const runs = settings.quick ? 2 : 7;
  const warmupMs = settings.quick ? 0 : 1_000;
  const processes = settings.quick ? 1 : 3;
  const results: WrapperCost[] = [];
  for (const [sessions, turns] of shapes as [number, number][]) {
    const workers = await startWorkers(sessions, turns, processes);
    /** Each round's samples by contender (one per process). */
    const rounds: number[][][] = [];
    try {
      // Two at a time (this machine has two cores); each still runs its full second.
      for (let at = 0; at < workers.length; at += 2) await Promise.all(workers.slice(at, at + 2).map((worker) => warmUp(worker, warmupMs)));
      const order = shuffler(workers.length);
      for (let round = 0; round < runs; round++) {
        const inRound = W1_CONTENDERS.map(() => [] as number[]);
        for (const at of order()) inRound[Math.floor(at / processes)]?.push(await (workers[at] as Worker).sample());
        rounds.push(inRound);
      }
    } finally {
      for (const worker of workers) worker.stop();
    }
    // Times: every process's samples of every round, pooled.
    const perTurn = (name: W1Contender) => median(rounds.flatMap((inRound) => inRound[W1_CONTENDERS.indexOf(name)] as number[])) / (sessions * turns);
    // A round measures every process once, within seconds: the machine's drift over a run (every
    // contender slowed alike, by up to 2x, in later rounds) cancels in a round's ratio.
    const roundMedians = rounds.map(
      (inRound) => Object.fromEntries(W1_CONTENDERS.map((name, i) => [name, median(inRound[i] as number[])])) as Record<W1Contender, number>,
    );
    const overRounds = (of: (round: Record<W1Contender, number>) => number) => median(roundMedians.map(of));
    results.push({
      workload: `${sessions === 1 ? "1 session" : `${sessions.toLocaleString("en")} sessions`} × ${turns.toLocaleString("en")} turns`,
      memoria: perTurn("memoria"),
      memoriaCopies: perTurn("memoriaCopies"),
      memoriaWindow: perTurn("memoriaWindow"),
      langchain: perTurn("langchain"),
      bare: perTurn("bare"),
      ratios: {
        turn: overRounds((r) => r.memoria / r.langchain),
        cost: overRounds((r) => costRatio(r.memoria, r.langchain, r.bare)),
        copiesCost: overRounds((r) => costRatio(r.memoriaCopies, r.langchain, r.bare)),
        windowCost: overRounds((r) => costRatio(r.memoriaWindow, r.langchain, r.bare)),
      },
    });
  }
  return results;
}
