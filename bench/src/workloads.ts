import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { createSqliteStore } from "@memoria/sql";
import Database from "better-sqlite3";
import { interleave, median, timed } from "./measure.js";
import { type Side, type StoreKind, conversation } from "./systems.js";
import { workerScript } from "./worker-script.js";

const run = promisify(execFile);

export interface Settings {
  quick: boolean;
  sizes: number[];
  runs: number;
  /** Untimed warm-up per W2/W3 row, at least (a second; the quick smoke run: a tenth). */
  warmupMs: number;
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
    for (const [system, side] of [
      ["memoria", kind.memoria],
      ["langchain", kind.langchain],
    ] as [string, Side | undefined][]) {
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

// ---------- W5: heap of sessions of 5 real turns ----------

export interface MemoryResult {
  system: string;
  sessions: number;
  heapMB: number;
  bytesPerMessage: number;
}

/** Each system runs its sessions' turns through its wrapper in a fresh process, which reports its heap after a full GC. */
export async function memoryFootprint(settings: Settings): Promise<MemoryResult[]> {
  const sessions = settings.quick ? 500 : 20_000;
  const script = await workerScript("memory-probe");
  // Both at once: each measures the heap of its own process, which the other's cannot touch.
  return Promise.all(
    ["memoria", "langchain"].map(async (system): Promise<MemoryResult> => {
      const { stdout } = await run(process.execPath, ["--expose-gc", "--max-old-space-size=8192", script, system, String(sessions)], {
        cwd: import.meta.dirname,
        maxBuffer: 1 << 20,
      });
      const { heapBytes, messages } = JSON.parse(stdout.trim().split("\n").pop() as string) as { heapBytes: number; messages: number };
      return { system, sessions, heapMB: heapBytes / 2 ** 20, bytesPerMessage: heapBytes / messages };
    }),
  );
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
  const requests = settings.quick ? "5000" : "100000";
  for (const clients of ["1", "50"]) {
    const { stdout } = await run("redis-benchmark", [
      "-h",
      "127.0.0.1",
      "-p",
      String(redisPort),
      "-t",
      "rpush,lrange_100",
      "-n",
      requests,
      "-c",
      clients,
      "-q",
    ]);
    for (const line of stdout.split(/\r|\n/).filter((l) => /requests per second/.test(l))) {
      const [name, rate] = line.split(":").map((part) => part.trim());
      out.push({
        name: `redis-benchmark ${name} (${clients} client${clients === "1" ? "" : "s"})`,
        value: rate?.replace(/,.*$/, "") ?? "",
        note: "the Redis server's own ceiling",
      });
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
      settings.quick ? 50 : 1_000,
      20,
    );
    out.push({
      name: "bare better-sqlite3: one transaction of 2 inserts (WAL, synchronous=FULL)",
      value: `${median(samples.bare as number[]).toFixed(3)} ms`,
      note: "the SQLite ceiling for saving a turn",
    });
    out.push({
      name: "memoria createSqliteStore().append(2 messages)",
      value: `${median(samples.memoria as number[]).toFixed(3)} ms`,
      note: "the same, through memoria",
    });
    db.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

export { timed };
