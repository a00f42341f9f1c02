/**
 * W5, in a fresh process: runs N sessions × 5 real turns (a question and its
 * answer each) through one system's RunnableWithMessageHistory over its in-memory
 * history, runs a full GC, and prints the heap it grew by as JSON. The bench runs it
 * compiled (worker-script.ts); by hand:
 *   node --expose-gc --import tsx memory-probe.ts <memoria|langchain> <sessions>
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory as LangChainWrapper } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { trivialModel } from "./systems.js";

const [system, count] = process.argv.slice(2) as [string, string];
const sessions = Number(count);
export const TURNS = 5;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

type Invoke = (input: HumanMessage[], config: { configurable: { sessionId: string } }) => Promise<unknown>;

function memoria(): { invoke: Invoke; keep: unknown } {
  const store = createInMemoryStore({ maxSessions: sessions + 1 });
  const chain = new RunnableWithMessageHistory({ runnable: trivialModel, store });
  return { invoke: (input, config) => chain.invoke(input, config), keep: store };
}

function langchain(): { invoke: Invoke; keep: unknown } {
  const histories = new Map<string, InMemoryChatMessageHistory>();
  const chain = new LangChainWrapper({
    runnable: trivialModel,
    getMessageHistory: (id: string) => histories.get(id) ?? (histories.set(id, new InMemoryChatMessageHistory()).get(id) as InMemoryChatMessageHistory),
  });
  return { invoke: (input, config) => chain.invoke(input, config), keep: histories };
}

const make = system === "memoria" ? memoria : langchain;
// Warm the code paths so their compiled code and caches are not counted.
const warm = make();
for (let t = 0; t < TURNS; t++) await warm.invoke([new HumanMessage(`warm ${t}`)], { configurable: { sessionId: "warm" } });
gc();
const before = process.memoryUsage().heapUsed;

const { invoke, keep } = make();
for (let s = 0; s < sessions; s++) {
  for (let t = 0; t < TURNS; t++)
    await invoke([new HumanMessage(`question ${t} of session ${s}: what do you think about this?`)], { configurable: { sessionId: `session-${s}` } });
}
gc();
const heapBytes = process.memoryUsage().heapUsed - before;
console.log(JSON.stringify({ system, sessions, messages: sessions * TURNS * 2, heapBytes, kept: keep !== undefined && warm !== undefined }));
