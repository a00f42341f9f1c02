import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { MemoriaError } from "@memoria/core";
import { createPostgresStore } from "@memoria/sql";
import { type RunningPostgres, startPostgres } from "@memoria/testkit/servers";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MemoriaSaver } from "../src/index.js";

let server: RunningPostgres;
beforeAll(async () => {
  // Durable (fsync, synchronous_commit): a commit the server acknowledged survives its crash.
  server = await startPostgres({ durable: true });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

it("a PostgreSQL server crashed (kill -9) twice during a thread's turns: every failure is typed, retried turns are kept once, the thread never forks", {
  timeout: 240_000,
}, async () => {
  const store = createPostgresStore({ connectionString: server.url, operationTimeoutMs: 3_000 });
  const saver = new MemoriaSaver({ store, lock: { ttlMs: 2_000 } });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => {
      const last = state.messages.at(-1) as BaseMessage;
      return { messages: [new AIMessage({ content: `echo: ${last.content}`, id: `ai-${last.id}` })] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "crashed" } };
  const TURNS = 24;
  const failures: unknown[] = [];
  const crashes = [8, 16];
  for (let turn = 0; turn < TURNS; turn += 1) {
    if (crashes.includes(turn)) void server.crash();
    for (let attempt = 0; ; attempt += 1) {
      try {
        await graph.invoke({ messages: [new HumanMessage({ content: `question ${turn}`, id: `h-${turn}` })] }, config);
        break;
      } catch (error) {
        failures.push(error);
        if (attempt > 40) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
  expect(failures.length, "the crashes failed no call: were they injected?").toBeGreaterThan(0);
  for (const failure of failures) expect(MemoriaError.isInstance(failure), String(failure)).toBe(true);

  const latest = await saver.getTuple(config);
  const ids = ((latest?.checkpoint.channel_values.messages ?? []) as BaseMessage[]).map((message) => message.id);
  expect(ids).toEqual(Array.from({ length: TURNS }, (_, turn) => [`h-${turn}`, `ai-h-${turn}`]).flat());
  const chain: CheckpointTuple[] = [];
  for await (const tuple of saver.list({ configurable: { ...config.configurable, checkpoint_ns: "" } })) chain.push(tuple);
  for (const [i, tuple] of chain.entries()) expect(tuple.parentConfig?.configurable?.checkpoint_id).toBe(chain[i + 1]?.config.configurable?.checkpoint_id);
  // Each message once in the thread's session, however many times its turn was tried.
  expect(await store.count({ threadId: "crashed" })).toBe(2 * TURNS);
  await saver.releaseLocks();
  await store.close();
});
