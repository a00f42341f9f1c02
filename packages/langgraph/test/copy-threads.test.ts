import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { serializeMessage } from "@memoria/core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { echoGraph } from "./echo-graph.js";
import { MemoriaSaver, copyThreads } from "../src/index.js";
import { freshStore } from "./stores.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-langgraph-copy-"));
const target = freshStore("sqlite");
afterAll(async () => {
  await target.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** What getStateHistory shows of a thread: each checkpoint's messages, next nodes, step and source. */
async function historyOf(checkpointer: BaseCheckpointSaver, threadId: string) {
  const out: unknown[] = [];
  for await (const snapshot of echoGraph(checkpointer).getStateHistory({ configurable: { thread_id: threadId } })) {
    out.push({
      id: snapshot.config.configurable?.checkpoint_id,
      parent: snapshot.parentConfig?.configurable?.checkpoint_id,
      messages: (snapshot.values.messages ?? []).map((message: BaseMessage) => serializeMessage(message)),
      next: snapshot.next,
      step: snapshot.metadata?.step,
      source: snapshot.metadata?.source,
    });
  }
  return out;
}

it("copies threads written by LangGraph's SqliteSaver, branches included, into MemoriaSaver: same history, and the threads go on", async () => {
  const source = SqliteSaver.fromConnString(join(dir, "langgraph.db"));
  const graph = echoGraph(source);
  for (const threadId of ["t1", "t2"]) {
    for (let n = 1; n <= 4; n += 1)
      await graph.invoke({ messages: [new HumanMessage({ content: `${threadId} ${n}`, id: `${threadId}-${n}` })] }, { configurable: { thread_id: threadId } });
  }
  // A branch of t1 from the end of its second turn.
  let past: { configurable?: Record<string, unknown> } | undefined;
  for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: "t1" } }))
    if (snapshot.values.messages?.length === 4 && snapshot.next.length === 0) past = snapshot.config;
  await graph.invoke({ messages: [new HumanMessage({ content: "t1 branch", id: "t1-b" })] }, past!);

  const saver = new MemoriaSaver({ store: target.store });
  const report = await copyThreads(source, saver);
  expect(report.threads).toBe(2);
  for (const threadId of ["t1", "t2"]) expect(await historyOf(saver, threadId)).toEqual(await historyOf(source, threadId));
  // Every message once in the thread's session, the branch's two as well: 8 + 2.
  expect(await target.store.count({ threadId: "t1" })).toBe(10);

  // Copied again: nothing is stored twice.
  await copyThreads(source, saver, { threadIds: ["t1"] });
  expect(await target.store.count({ threadId: "t1" })).toBe(10);
  expect(await historyOf(saver, "t1")).toEqual(await historyOf(source, "t1"));

  await echoGraph(saver).invoke({ messages: [new HumanMessage({ content: "t2 5", id: "t2-5" })] }, { configurable: { thread_id: "t2" } });
  expect((await saver.getTuple({ configurable: { thread_id: "t2" } }))?.checkpoint.channel_values.messages).toHaveLength(10);
  (source as unknown as { db: { close(): void } }).db.close();
});
