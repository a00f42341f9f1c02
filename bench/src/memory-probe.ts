/**
 * W5, in a fresh process: fills one system's in-memory history with N sessions ×
 * 10 messages, runs a full GC, and prints the heap it grew by as JSON.
 *   node --expose-gc --import tsx memory-probe.ts <memoria|langchain> <sessions>
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { createInMemoryStore } from "@memoria/core";
import { conversation } from "./systems.js";

const [system, count] = process.argv.slice(2) as [string, string];
const sessions = Number(count);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

// Warm the code paths so their compiled code and caches are not counted.
const warm = createInMemoryStore();
await warm.append({ sessionId: "warm" }, conversation(10));
new InMemoryChatMessageHistory().addMessages(conversation(10));
gc();
const before = process.memoryUsage().heapUsed;

let keep: unknown;
if (system === "memoria") {
  const store = createInMemoryStore({ maxSessions: sessions });
  for (let s = 0; s < sessions; s++) await store.append({ sessionId: `session-${s}` }, conversation(10, s * 10));
  keep = store;
} else {
  const histories = new Map<string, InMemoryChatMessageHistory>();
  for (let s = 0; s < sessions; s++) {
    const history = new InMemoryChatMessageHistory();
    await history.addMessages(conversation(10, s * 10));
    histories.set(`session-${s}`, history);
  }
  keep = histories;
}
gc();
const heapBytes = process.memoryUsage().heapUsed - before;
console.log(JSON.stringify({ system, sessions, heapBytes, kept: keep !== undefined }));
