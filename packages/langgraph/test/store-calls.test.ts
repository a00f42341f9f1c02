import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { HistoryStore } from "@memoria/core";
import { afterAll, expect, it } from "vitest";
import { MemoriaSaver } from "../src/index.js";
import { freshStore } from "./stores.js";

// What one turn of a one-node graph costs the store, pinned: a change that adds a
// round trip to every turn shows here. (`pnpm bench --only W9` times it.)

const fresh = freshStore("sqlite");
afterAll(() => fresh.dispose());

/** The store, with every call it receives counted by name. */
function counted(store: HistoryStore): { store: HistoryStore; calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  const count = (name: string) => {
    calls[name] = (calls[name] ?? 0) + 1;
  };
  const wrapped = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return async (...args: unknown[]) => {
        count(name);
        const result = await value.apply(target, args);
        if (name === "lock") {
          const release = result.release.bind(result);
          result.release = () => {
            count("release");
            return release();
          };
        }
        return result;
      };
    },
  });
  return { store: wrapped, calls };
}

it("a turn of a one-node graph: 3 reads to load, then 3 checkpoints (each with its head, in one write) and 2 sets of writes under one lock", async () => {
  const { store, calls } = counted(fresh.store);
  const saver = new MemoriaSaver({ store });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("reply", () => ({ messages: [new AIMessage("ok")] }))
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "counted" } };
  await graph.invoke({ messages: [new HumanMessage("first")] }, config);
  await saver.releaseLocks();
  for (const name of Object.keys(calls)) delete calls[name];
  await graph.invoke({ messages: [new HumanMessage("second")] }, config);
  await saver.releaseLocks();
  // Each of 3 puts writes the checkpoint and the head in one write (one transaction);
  // each of 2 putWrites its record: five state writes.
  expect(calls.setStates).toBe(5);
  expect(calls.setState).toBeUndefined();
  // The question and the answer, each appended once.
  expect(calls.append).toBe(2);
  // One lock for the whole burst, given back once. (On a machine so busy that the graph
  // takes longer than the 25 ms the lock is kept between writes, it is taken again, and
  // each new lock may cost the head read and the pool count below once more.)
  expect(calls.release).toBe(calls.lock);
  expect(calls.lock).toBeGreaterThanOrEqual(1);
  // getTuple: the head, the checkpoint, its pending writes; the first put: the head (the
  // next puts reuse what it wrote under the same lock); each putWrites: its record.
  expect(calls.getState).toBeGreaterThanOrEqual(6);
  expect(calls.getState).toBeLessThanOrEqual(5 + (calls.lock as number));
  // The pool's length checked once under each lock, before the first append.
  expect(calls.count).toBeGreaterThanOrEqual(1);
  expect(calls.count).toBeLessThanOrEqual(calls.lock as number);
  expect(Object.keys(calls).sort()).toEqual(["append", "count", "getState", "lock", "release", "setStates"]);
});
