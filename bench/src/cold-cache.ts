/**
 * What a call costs when the machine has done something else first. Each operation
 * runs right after its previous run (warm), and after the process spins (busy, but on
 * nothing of the operation's) or sleeps for a while, the way a turn runs after a
 * server's reply or a person's pause. On a shared virtual machine the caches a call
 * warmed are lost within milliseconds even while the process spins, so a call that
 * follows any wait runs on cold caches and costs about the memory it touches, not the
 * instructions it runs: the rows of W2 and W8 that sit furthest from the bare engine are
 * the ones measured that way. One process for all (so the warm turns run slower than
 * W1's, each wrapper in a process of its own; the ratios are the point); medians of 40
 * calls each; asserts nothing.
 *
 *   pnpm --filter @memoria/bench cold-cache
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory as LangChainWrapper } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, createInMemoryStore, encodeSessionKey } from "@memoria/core";
import { recallQuery, recallTerms } from "@memoria/recall";
import { createSqliteStore } from "@memoria/sql";
import { median } from "./measure.js";
import { conversation, trivialModel } from "./systems.js";

const CALLS = 40;
const WAITS_MS = [0.2, 1, 5, 20];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const spin = (ms: number) => {
  for (const end = performance.now() + ms; performance.now() < end; );
};

/** Microseconds of one call of `operation` (its n-th), after `before` ran untimed. */
async function sample(operation: (n: number) => Promise<unknown>, before: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let n = 0; n < CALLS; n++) {
    await before();
    const start = performance.now();
    await operation(n);
    times.push((performance.now() - start) * 1000);
  }
  return median(times);
}

const input = () => [new HumanMessage("hello there")];
const memoria = new RunnableWithMessageHistory({ runnable: trivialModel, store: createInMemoryStore() });
const histories = new Map<string, InMemoryChatMessageHistory>();
const langchain = new LangChainWrapper({
  runnable: trivialModel,
  getMessageHistory: (id: string) => histories.get(id) ?? (histories.set(id, new InMemoryChatMessageHistory()).get(id) as InMemoryChatMessageHistory),
});
const byHand = new Map<string, BaseMessage[]>();
// Sessions of 10 messages, as W2's smallest rows: a new one every 5 turns, so none grows far.
const session = (n: number) => ({ configurable: { sessionId: `s${Math.floor(n / 5)}` } });

const dir = mkdtempSync(join(tmpdir(), "memoria-bench-cold-"));
const store = createSqliteStore({ path: join(dir, "history.db") });
try {
  // A recall scope of 2,000 short notes, held in the process after its second query.
  const index = store.recallIndex();
  const scope = encodeSessionKey({ userId: "cold" });
  const notes = { userId: "cold", conversationId: "notes" };
  const said = conversation(2_000);
  await store.append(notes, said);
  const notesId = encodeSessionKey(notes);
  await index.upsert(
    said.map((message, position) => ({ scope, session: notesId, position, at: position, vector: [1], terms: recallTerms(String(message.content)) })),
  );
  const operations: Record<string, (n: number) => Promise<unknown>> = {
    "turn by hand (in-memory array)": async (n) => {
      const id = session(n).configurable.sessionId;
      const history = byHand.get(id) ?? (byHand.set(id, []).get(id) as BaseMessage[]);
      const answer = await trivialModel.invoke([...history, ...input()]);
      history.push(...input(), answer);
    },
    "memoria turn (in-memory store)": (n) => memoria.invoke(input(), session(n)),
    "LangChain turn (in-memory history)": (n) => langchain.invoke(input(), session(n)),
    "recall word search (SQLite, held scope)": (n) => index.searchTerms?.(scope, recallQuery(`plans for message ${n % 50}`), 12) ?? Promise.resolve(),
  };
  for (const operation of Object.values(operations)) for (let n = 0; n < 500; n++) await operation(n);
  const header = ["operation", "warm", ...WAITS_MS.map((ms) => `after spinning ${ms} ms`), ...WAITS_MS.map((ms) => `after sleeping ${ms} ms`)];
  console.log(`| ${header.join(" | ")} |\n|${" --- |".repeat(header.length)}`);
  for (const [name, operation] of Object.entries(operations)) {
    const warm = await sample(operation, () => {});
    const cells = [`${warm.toFixed(1)} µs`];
    for (const ms of WAITS_MS) cells.push(`${((await sample(operation, () => spin(ms))) / warm).toFixed(1)}×`);
    for (const ms of WAITS_MS) cells.push(`${((await sample(operation, () => sleep(ms))) / warm).toFixed(1)}×`);
    console.log(`| ${name} | ${cells.join(" | ")} |`);
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
