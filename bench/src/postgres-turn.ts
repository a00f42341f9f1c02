/**
 * What taking the history with the turn lock saves a PostgreSQL turn: the lock taken
 * with a whole read of 10 messages and released, against lock, read and release; and
 * a whole-history turn of the wrapper whose strategy declares its first read (lock and
 * read in one query) against one that does not (lock, then read), and against the
 * same turn with `preparedStatements: false` (what preparing its statements saves).
 * One process, one throwaway PostgreSQL (without fsync by default, so the append's
 * flush does not hide the difference), the contenders alternated in blocks of 25, medians of 30 blocks after 5
 * untimed ones; asserts nothing.
 *
 *   pnpm --filter @memoria/bench postgres-turn           # commits not flushed
 *   pnpm --filter @memoria/bench postgres-turn durable   # the server's defaults
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type MemoryStrategy, RunnableWithMessageHistory } from "@memoria/core";
import { createPostgresStore } from "@memoria/sql";
import { startPostgres } from "@memoria/testkit/servers";
import { median } from "./measure.js";

const BLOCK = 25;
const ten = () => Array.from({ length: 10 }, (_, i) => new HumanMessage(`message ${i}`));
const server = await startPostgres({ durable: process.argv[2] === "durable" });
const store = createPostgresStore({ connectionString: server.url });
const lock = store.lock as NonNullable<typeof store.lock>;
const model = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`));
const chain = (memory: MemoryStrategy) => new RunnableWithMessageHistory({ runnable: model, store, memory });
const declared = chain({ name: "declared", firstRead: {}, load: ({ read }) => read() });
// The same turn on a store that sends its statements unnamed: the server parses and plans each every time.
const unpreparedStore = createPostgresStore({ connectionString: server.url, preparedStatements: false });
const unprepared = new RunnableWithMessageHistory({
  runnable: model,
  store: unpreparedStore,
  memory: { name: "declared", firstRead: {}, load: ({ read }) => read() },
});
const undeclared = chain({ name: "undeclared", load: ({ read }) => read() });

let sessions = 0;
/** Microseconds per call of `work`, over a block of calls on a session of 10 messages. */
async function block(work: (key: { sessionId: string }) => Promise<unknown>): Promise<number> {
  const key = { sessionId: `s${sessions++}` };
  await store.append(key, ten());
  const start = performance.now();
  for (let i = 0; i < BLOCK; i++) await work(key);
  return ((performance.now() - start) / BLOCK) * 1000;
}

const contenders: Record<string, (key: { sessionId: string }) => Promise<unknown>> = {
  "turn with its read, release": async (key) => (await store.openTurn(key, { read: {} })).release(),
  "lock, read, release": async (key) => {
    const held = await lock(key);
    await store.read(key);
    await held.release();
  },
  "turn, first read declared": (key) => declared.invoke("q", { configurable: key }),
  "turn, undeclared": (key) => undeclared.invoke("q", { configurable: key }),
  "turn, first read declared, preparedStatements: false": (key) => unprepared.invoke("q", { configurable: key }),
};
try {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
  for (let round = 0; round < 35; round++) {
    const names = Object.keys(contenders);
    if (round % 2) names.reverse();
    for (const name of names) {
      const us = await block(contenders[name] as (key: { sessionId: string }) => Promise<unknown>);
      if (round >= 5) samples[name]?.push(us);
    }
  }
  console.log("| contender | median |\n| --- | --- |");
  for (const [name, values] of Object.entries(samples)) console.log(`| ${name} | ${median(values).toFixed(0)} µs |`);
} finally {
  await store.close();
  await unpreparedStore.close();
  await server.stop();
}
