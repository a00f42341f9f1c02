/**
 * One worker process of a soak run (`runSoak`): once its store is open it says it is
 * ready, and from the start its parent then sends it takes turns on every session it is
 * given, all at once, until that deadline, and reports over IPC each turn that
 * resolved (with its time), and its heap and open file descriptors every second.
 *
 *   node --import tsx soak-worker.js <store module> <target> <config JSON>
 *
 * The store module exports `createStore(target)`, and for a LangChain run
 * `langchainHistory(target, sessionId)`. A turn's input is `<writer>/<seq>` with the
 * same text as its turn id; a turn that rejects is tried again with the same turn id
 * until it resolves (the documented rule), so a stored turn is never written twice.
 */
import { readdirSync } from "node:fs";
import type { BaseChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory as LangChainWrapper, RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, MemoriaError, type MemoryStrategy, RunnableWithMessageHistory } from "@memoria/core";

export interface SoakWorkerConfig {
  writer: string;
  sessions: string[];
  system: "memoria" | "langchain";
}

/** What a worker sends its parent. */
export type SoakMessage =
  | { ready: true }
  | { ack: { session: string; seq: number; ms: number; at: number } }
  | { sample: { heapUsed: number; fds: number; at: number } }
  | { failure: { typed: boolean; code: string } }
  | { done: true };

/** What a parent sends a worker once it is ready: when to stop starting turns (epoch ms). */
export interface SoakStart {
  deadline: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const send = (message: SoakMessage) => process.send?.(message);

/** The last 20 messages, read with the turn lock: a turn whose cost does not grow with the session. */
const lastTwenty: MemoryStrategy = { name: "last-20", firstRead: { last: 20 }, load: (context) => context.read({ last: 20 }) };
const answer = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`ok ${String(messages[messages.length - 1]?.content)}`));

async function main(): Promise<void> {
  process.once("disconnect", () => process.exit(1)); // the run that started us is gone: so is its reason to go on
  const [storeModule, target, json] = process.argv.slice(2) as [string, string, string];
  const config = JSON.parse(json) as SoakWorkerConfig;
  const module = (await import(storeModule)) as {
    createStore(target: string): HistoryStore | Promise<HistoryStore>;
    langchainHistory?(target: string, sessionId: string): BaseChatMessageHistory;
  };
  let store: HistoryStore | undefined;
  let invoke: (input: BaseMessage[], sessionId: string, turnId: string) => Promise<unknown>;
  if (config.system === "langchain") {
    const history = module.langchainHistory;
    if (!history) throw new Error(`${storeModule} has no langchainHistory(target, sessionId)`);
    const chain = new LangChainWrapper({ runnable: answer, getMessageHistory: (sessionId: string) => history(target, sessionId) });
    invoke = (input, sessionId) => chain.invoke(input, { configurable: { sessionId } });
  } else {
    store = await module.createStore(target);
    const chain = new RunnableWithMessageHistory({ runnable: answer, store, memory: lastTwenty, lockOptions: { ttlMs: 3_000 } });
    invoke = (input, sessionId, turnId) => chain.invoke(input, { configurable: { sessionId, turnId } });
  }

  // The run starts when every worker is ready: loading the modules and opening a store is no part of the load.
  const { deadline } = await new Promise<SoakStart>((resolve) => {
    process.once("message", (start: SoakStart) => resolve(start));
    send({ ready: true });
  });
  const sampler = setInterval(
    () => send({ sample: { heapUsed: process.memoryUsage().heapUsed, fds: readdirSync("/proc/self/fd").length, at: Date.now() } }),
    1_000,
  );
  const grace = deadline + 30_000; // a turn begun before the deadline is seen through, through a fault
  await Promise.all(
    config.sessions.map(async (session) => {
      for (let seq = 0; Date.now() < deadline; seq++) {
        const text = `${config.writer}/${seq}`;
        const started = performance.now();
        for (;;) {
          try {
            await invoke([new HumanMessage(text)], session, text);
            send({ ack: { session, seq, ms: performance.now() - started, at: Date.now() } });
            // A turn whose calls all finish at once (SQLite's are synchronous) would otherwise keep the event loop from its timers.
            await new Promise((resolve) => setImmediate(resolve));
            break;
          } catch (error) {
            send({ failure: { typed: MemoriaError.isInstance(error), code: MemoriaError.isInstance(error) ? error.code : String((error as Error)?.name) } });
            if (Date.now() > grace) return;
            await sleep(50);
          }
        }
      }
    }),
  );
  clearInterval(sampler);
  await store?.close();
  // Sent in order: once the last is out, so is every report before it. Then exit, whatever a client given to the store keeps open.
  process.send?.({ done: true } satisfies SoakMessage, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
