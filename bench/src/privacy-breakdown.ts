/**
 * Where an encrypted turn's extra time goes, phase by phase, with the disk out of the
 * way: SQLite with `synchronous: "NORMAL"` (no fsync per commit), one process, a
 * plain and an encrypted store side by side, turns as the wrapper makes them (lock,
 * read the last 20, append the question and answer under the lock and release it),
 * alternated in blocks. A third store, plain, gets messages padded so that its rows are
 * about as long as sealed ones: what the rows' size alone costs. Also counts the SQL
 * statements each turn runs. Prints microseconds per phase; asserts nothing.
 *
 *   pnpm --filter @memoria/bench breakdown            # 3,000 turns per store and round
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { HistoryStore } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import { watchStatements } from "@memoria/testkit/sqlite-statements";
import Database from "better-sqlite3";

const TURNS = Number(process.argv[2] ?? 3_000);
const PHASES = ["lock", "read", "append", "release"] as const;
type Phase = (typeof PHASES)[number];

/** A better-sqlite3 database whose statement runs are counted. */
function countedDatabase(path: string, counter: { statements: number }): Database.Database {
  const db = watchStatements(new Database(path), () => counter.statements++);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  return db;
}

const now = () => Number(process.hrtime.bigint()) / 1_000;
let n = 0;
/** Padding that makes a plain row about as long as a sealed one (base64url, envelope and its JSON). */
const PAD = ` ${"x".repeat(150)}`;
const turnMessages = (pad = "") => [
  new HumanMessage(`question ${n} about something${pad}`),
  new AIMessage(`answer number ${n++} with some words in it to look like a reply${pad}`),
];

async function turn(store: HistoryStore, times: Record<Phase, number>, pad?: string): Promise<void> {
  const key = { sessionId: "breakdown" };
  let t = now();
  const opened = await store.openTurn(key);
  times.lock += now() - t;
  t = now();
  await store.read(key, { last: 20 });
  times.read += now() - t;
  t = now();
  await opened.save(turnMessages(pad), { last: true });
  times.append += now() - t;
  t = now();
  await opened.release();
  times.release += now() - t;
}

const dir = mkdtempSync(join(tmpdir(), "memoria-breakdown-"));
try {
  const counters = { plain: { statements: 0 }, "plain, padded": { statements: 0 }, encrypted: { statements: 0 } };
  const stores: Record<keyof typeof counters, HistoryStore> = {
    plain: createSqliteStore({ database: countedDatabase(join(dir, "plain.db"), counters.plain) }),
    "plain, padded": createSqliteStore({ database: countedDatabase(join(dir, "padded.db"), counters["plain, padded"]) }),
    encrypted: encryptStore(createSqliteStore({ database: countedDatabase(join(dir, "sealed.db"), counters.encrypted) }), {
      keys: { A: randomBytes(32) },
      activeKeyId: "A",
    }),
  };
  const names = Object.keys(stores) as (keyof typeof counters)[];
  const padOf = (name: keyof typeof counters) => (name === "plain, padded" ? PAD : undefined);
  for (const name of names) {
    for (let i = 0; i < 500; i++) await turn(stores[name], { lock: 0, read: 0, append: 0, release: 0 }, padOf(name)); // 1,000 messages, warm
  }
  for (let round = 1; round <= 2; round++) {
    for (const name of names) {
      const times: Record<Phase, number> = { lock: 0, read: 0, append: 0, release: 0 };
      counters[name].statements = 0;
      for (let i = 0; i < TURNS; i++) await turn(stores[name], times, padOf(name));
      const phases = PHASES.map((phase) => `${phase} ${(times[phase] / TURNS).toFixed(1)} µs`).join(", ");
      const total = PHASES.reduce((sum, phase) => sum + times[phase], 0) / TURNS;
      console.log(
        `round ${round} ${name.padEnd(13)} turn ${total.toFixed(1)} µs (${phases}); ${(counters[name].statements / TURNS).toFixed(1)} SQL statements a turn`,
      );
    }
  }
  await Promise.all(Object.values(stores).map((store) => store.close()));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
