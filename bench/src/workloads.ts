import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda, RunnableWithMessageHistory as LangChainWrapper } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { windowMemory } from "@memoria/memory";
import { createSqliteStore } from "@memoria/sql";
import Database from "better-sqlite3";
import { collectGarbage, interleave, median, timed } from "./measure.js";
import { type Side, type StoreKind, conversation, trivialModel } from "./systems.js";

const run = promisify(execFile);

export interface Settings {
  quick: boolean;
  sizes: number[];
  runs: number;
}

// ---------- W1: the wrapper's own cost per turn ----------

export interface WrapperCost {
  workload: string;
  memoria: number;
  /** The whole history from an in-memory store created with `frozen: true`. */
  memoriaFrozen: number;
  memoriaWindow: number;
  langchain: number;
}

/** Per-turn milliseconds of `turns` turns spread over `sessions` sessions, in memory, with a trivial model. */
export async function wrapperCost(settings: Settings): Promise<WrapperCost[]> {
  const shapes = settings.quick ? [[1, 300], [200, 5]] : [[1, 2_000], [1_000, 5]];
  const results: WrapperCost[] = [];
  for (const [sessions, turns] of shapes as [number, number][]) {
    const drive = (invoke: (input: BaseMessage[], config: object) => Promise<unknown>) => async () => {
      for (let s = 0; s < sessions; s++) {
        for (let t = 0; t < turns; t++) await invoke([new HumanMessage("hello there")], { configurable: { sessionId: `s${s}` } });
      }
    };
    const contenders = {
      memoria: () => {
        const chain = new RunnableWithMessageHistory({ runnable: trivialModel, store: createInMemoryStore({ maxSessions: 100_000 }) });
        return drive((i, c) => chain.invoke(i, c))();
      },
      memoriaFrozen: () => {
        const chain = new RunnableWithMessageHistory({ runnable: trivialModel, store: createInMemoryStore({ maxSessions: 100_000, frozen: true }) });
        return drive((i, c) => chain.invoke(i, c))();
      },
      memoriaWindow: () => {
        const chain = new RunnableWithMessageHistory({ runnable: trivialModel, store: createInMemoryStore({ maxSessions: 100_000 }), memory: windowMemory({ k: 10 }) });
        return drive((i, c) => chain.invoke(i, c))();
      },
      langchain: () => {
        const histories = new Map<string, InMemoryChatMessageHistory>();
        const chain = new LangChainWrapper({
          runnable: trivialModel,
          getMessageHistory: (id: string) => {
            if (!histories.has(id)) histories.set(id, new InMemoryChatMessageHistory());
            return histories.get(id) as InMemoryChatMessageHistory;
          },
        });
        return drive((i, c) => chain.invoke(i, c))();
      },
    };
    const samples = await interleave(contenders, settings.quick ? 2 : 5, 1);
    const perTurn = (name: keyof typeof contenders) => median(samples[name] as number[]) / (sessions * turns);
    results.push({
      workload: `${sessions === 1 ? "1 session" : `${sessions.toLocaleString("en")} sessions`} × ${turns.toLocaleString("en")} turns`,
      memoria: perTurn("memoria"),
      memoriaFrozen: perTurn("memoriaFrozen"),
      memoriaWindow: perTurn("memoriaWindow"),
      langchain: perTurn("langchain"),
    });
  }
  return results;
}

// ---------- W2 / W3: latency against session length ----------

export interface LengthPoint {
  store: string;
  size: number;
  memoriaTurn: number;
  langchainTurn?: number;
  memoriaRead: number;
  langchainRead?: number;
}

export interface Flatness {
  store: string;
  small: number;
  large: number;
  /** Turn and read medians at the largest size over those at the smallest. */
  turn: number;
  read: number;
}

/**
 * Turn latency (W2) and read-last-20 latency (W3) per store, at each session
 * length; then, per store, memoria's smallest and largest sessions interleaved
 * with each other only, so that flatness is measured without LangChain's
 * 100,000-message reads (their garbage, their server load) between the samples.
 */
export async function latencyBySize(kinds: StoreKind[], settings: Settings, log: (line: string) => void): Promise<{ points: LengthPoint[]; flatness: Flatness[] }> {
  const points: LengthPoint[] = [];
  const flatness: Flatness[] = [];
  for (const kind of kinds) {
    const tags = new Map<number, string>();
    const sizes = settings.sizes.filter((size) => size <= (kind.maxSize ?? Number.POSITIVE_INFINITY));
    for (const size of sizes) {
      const tag = `${size}-${crypto.randomUUID().slice(0, 8)}`;
      tags.set(size, tag);
      const sides: [string, Side][] = [["memoria", kind.memoria]];
      if (kind.langchain && size <= (kind.langchain.maxSeed ?? Number.POSITIVE_INFINITY)) sides.push(["langchain", kind.langchain]);
      for (const [, side] of sides) await side.seed(`w2-${tag}`, size);
      for (const [, side] of sides) await side.seed(`w3-${tag}`, size);
      // Fewer runs where LangChain must read 100,000 messages per turn.
      const runs = size >= 100_000 ? Math.max(5, Math.round(settings.runs / 3)) : settings.runs;
      collectGarbage(); // seeding's garbage is not the runs' business
      const turns = await interleave(Object.fromEntries(sides.map(([name, side]) => [name, () => side.turn(`w2-${tag}`)])), runs);
      const reads = await interleave(Object.fromEntries(sides.map(([name, side]) => [name, () => side.readLast20(`w3-${tag}`)])), runs);
      const point: LengthPoint = {
        store: kind.name,
        size,
        memoriaTurn: median(turns.memoria as number[]),
        langchainTurn: turns.langchain ? median(turns.langchain) : undefined,
        memoriaRead: median(reads.memoria as number[]),
        langchainRead: reads.langchain ? median(reads.langchain) : undefined,
      };
      points.push(point);
      log(`  ${kind.name} @ ${size.toLocaleString("en")} messages: turn ${point.memoriaTurn.toFixed(3)} ms vs ${point.langchainTurn?.toFixed(3) ?? "—"} ms; read-last-20 ${point.memoriaRead.toFixed(3)} ms vs ${point.langchainRead?.toFixed(3) ?? "—"} ms`);
    }
    // The smallest session whose last-20 window is full, so both reads return 20 messages.
    const small = Math.min(...sizes.filter((size) => size >= 20));
    const large = Math.max(...sizes);
    const [s, l] = [tags.get(small), tags.get(large)];
    collectGarbage();
    const turns = await interleave({ small: () => kind.memoria.turn(`w2-${s}`), large: () => kind.memoria.turn(`w2-${l}`) }, settings.runs * 4);
    const reads = await interleave({ small: () => kind.memoria.readLast20(`w3-${s}`), large: () => kind.memoria.readLast20(`w3-${l}`) }, settings.runs * 4);
    const entry = {
      store: kind.name,
      small,
      large,
      turn: median(turns.large as number[]) / median(turns.small as number[]),
      read: median(reads.large as number[]) / median(reads.small as number[]),
    };
    flatness.push(entry);
    log(`  ${kind.name} alone: ${large.toLocaleString("en")} vs ${small} messages: turn ${entry.turn.toFixed(2)}×, read ${entry.read.toFixed(2)}×`);
  }
  return { points, flatness };
}

// ---------- W4: 50 concurrent turns on one session ----------

export interface ConcurrencyResult {
  store: string;
  system: string;
  stored: number;
  lost: number;
  duplicated: number;
  misordered: number;
  missedTurns: number;
}

/** 50 turns on one session at once: what was lost, duplicated, misordered, and how many turns missed an earlier one. */
export async function concurrentTurns(kinds: StoreKind[]): Promise<ConcurrencyResult[]> {
  const TURNS = 50;
  const results: ConcurrencyResult[] = [];
  for (const kind of kinds) {
    for (const [system, side] of [["memoria", kind.memoria], ["langchain", kind.langchain]] as [string, Side | undefined][]) {
      if (!side) continue;
      const sessionId = `w4-${crypto.randomUUID()}`;
      const completion: { turn: number; saw: number }[] = [];
      const model = RunnableLambda.from(async (messages: BaseMessage[]) => {
        const question = String(messages[messages.length - 1]?.content);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
        return new AIMessage(`answer to ${question} (saw ${messages.length})`);
      });
      const chain = side.wrapper(model);
      await Promise.all(
        Array.from({ length: TURNS }, async (_, turn) => {
          const output = (await chain.invoke([new HumanMessage(`q${turn}`)], { configurable: { sessionId } })) as AIMessage;
          completion.push({ turn, saw: Number(/saw (\d+)/.exec(String(output.content))?.[1]) });
        }),
      );
      const stored = await side.readAll(sessionId);
      const questions = stored.filter((m) => m.getType() === "human").map((m) => String(m.content));
      let misordered = 0;
      for (let i = 0; i < stored.length; i += 2) {
        const q = stored[i];
        const a = stored[i + 1];
        if (q?.getType() !== "human" || !String(a?.content).startsWith(`answer to ${q.content} `)) misordered++;
      }
      // Serialized, the k-th turn to finish saw the 2k messages before it plus its own.
      const missedTurns = completion.filter(({ saw }, k) => saw < 2 * k + 1).length;
      results.push({
        store: kind.name,
        system,
        stored: stored.length,
        lost: TURNS - new Set(questions).size,
        duplicated: questions.length - new Set(questions).size,
        misordered,
        missedTurns,
      });
    }
  }
  return results;
}

// ---------- W5: peak memory of 100,000 sessions × 10 messages ----------

export interface MemoryResult {
  system: string;
  sessions: number;
  heapMB: number;
  bytesPerMessage: number;
}

/** Each system fills its in-memory history in a fresh process, which reports its heap after a full GC. */
export async function memoryFootprint(settings: Settings): Promise<MemoryResult[]> {
  const sessions = settings.quick ? 10_000 : 100_000;
  const script = join(import.meta.dirname, "memory-probe.ts");
  const results: MemoryResult[] = [];
  for (const system of ["memoria", "langchain"]) {
    const { stdout } = await run(process.execPath, ["--expose-gc", "--max-old-space-size=8192", "--import", "tsx", script, system, String(sessions)], {
      cwd: import.meta.dirname,
      maxBuffer: 1 << 20,
    });
    const { heapBytes } = JSON.parse(stdout.trim().split("\n").pop() as string) as { heapBytes: number };
    results.push({ system, sessions, heapMB: heapBytes / 2 ** 20, bytesPerMessage: heapBytes / (sessions * 10) });
  }
  return results;
}

// ---------- W6: the ceiling ----------

export interface Ceiling {
  name: string;
  value: string;
  note: string;
}

/** What the bare engines do: redis-benchmark RPUSH / LRANGE, and a bare better-sqlite3 insert loop beside memoria's append. */
export async function ceilings(redisPort: number, settings: Settings): Promise<Ceiling[]> {
  const out: Ceiling[] = [];
  const requests = settings.quick ? "20000" : "100000";
  for (const clients of ["1", "50"]) {
    const { stdout } = await run("redis-benchmark", ["-h", "127.0.0.1", "-p", String(redisPort), "-t", "rpush,lrange_100", "-n", requests, "-c", clients, "-q"]);
    for (const line of stdout.split(/\r|\n/).filter((l) => /requests per second/.test(l))) {
      const [name, rate] = line.split(":").map((part) => part.trim());
      out.push({ name: `redis-benchmark ${name} (${clients} client${clients === "1" ? "" : "s"})`, value: rate?.replace(/,.*$/, "") ?? "", note: "the Redis server's own ceiling" });
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "memoria-ceiling-"));
  try {
    const db = new Database(join(dir, "bare.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec("CREATE TABLE m (session_id TEXT NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (session_id, seq))");
    const insert = db.prepare("INSERT INTO m VALUES (?, ?, ?)");
    const turn = db.transaction((seq: number) => {
      insert.run("s", seq, '{"v":1,"type":"human","data":{"content":"question"}}');
      insert.run("s", seq + 1, '{"v":1,"type":"ai","data":{"content":"answer"}}');
    });
    const store = createSqliteStore({ path: join(dir, "memoria.db") });
    const pair = conversation(2);
    let seq = 0;
    const samples = await interleave(
      {
        bare: async () => {
          turn(seq);
          seq += 2;
        },
        memoria: () => store.append({ sessionId: "s" }, pair),
      },
      settings.quick ? 200 : 1_000,
      20,
    );
    out.push({ name: "bare better-sqlite3: one transaction of 2 inserts (WAL, synchronous=FULL)", value: `${median(samples.bare as number[]).toFixed(3)} ms`, note: "the SQLite ceiling for saving a turn" });
    out.push({ name: "memoria createSqliteStore().append(2 messages)", value: `${median(samples.memoria as number[]).toFixed(3)} ms`, note: "the same, through memoria" });
    db.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

export { timed };
