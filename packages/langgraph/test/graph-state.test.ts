import { AIMessage, type BaseMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph-checkpoint";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { serializeMessage } from "@memoria/core";
import { afterEach, describe, expect, it } from "vitest";
import { MemoriaSaver, ThreadBusyError } from "../src/index.js";
import { type EmbeddedKind, type FreshStore, freshStore } from "./stores.js";

/** A graph that answers every human message with a numbered echo, and drops all but the last 4 messages past 10. */
function echoGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => {
      const last = state.messages[state.messages.length - 1] as BaseMessage;
      const reply = new AIMessage({ content: `echo: ${last.content}`, id: `ai-${last.id}` });
      if (state.messages.length < 10) return { messages: [reply] };
      const drop = state.messages.slice(0, -3).map((message) => new RemoveMessage({ id: message.id as string }));
      return { messages: [...drop, reply] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer });
}

const human = (n: number) => new HumanMessage({ content: `message ${n}`, id: `h-${n}` });
const texts = (messages: BaseMessage[]) => messages.map((message) => serializeMessage(message));

const opened: FreshStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fresh) => fresh.dispose()));
});
function saverOn(kind: EmbeddedKind, options: Partial<ConstructorParameters<typeof MemoriaSaver>[0]> = {}) {
  const fresh = freshStore(kind);
  opened.push(fresh);
  return { saver: new MemoriaSaver({ store: fresh.store, ...options }), store: fresh.store };
}

describe.each(["memory", "sqlite", "sqlite, encrypted"] as EmbeddedKind[])("MemoriaSaver in a real StateGraph, on %s", (kind) => {
  it("gives back the same state and history as LangGraph's MemorySaver, storing each message once", async () => {
    const { saver, store } = saverOn(kind);
    const ours = echoGraph(saver);
    const theirs = echoGraph(new MemorySaver());
    const config = { configurable: { thread_id: "t1" } };
    for (let n = 1; n <= 8; n += 1) {
      await ours.invoke({ messages: [human(n)] }, config);
      await theirs.invoke({ messages: [human(n)] }, config);
    }
    expect(texts((await ours.getState(config)).values.messages)).toEqual(texts((await theirs.getState(config)).values.messages));
    const history = async (graph: typeof ours) => {
      const out: string[][] = [];
      for await (const snapshot of graph.getStateHistory(config)) out.push(texts(snapshot.values.messages ?? []));
      return out;
    };
    expect(await history(ours)).toEqual(await history(theirs));
    // The thread's session holds every message once: 8 questions, 8 echoes, including after messages were removed.
    expect(await store.count({ threadId: "t1" })).toBe(16);
  });

  it("forks from a past checkpoint (time travel) exactly as LangGraph does, leaving the original line intact", async () => {
    const { saver } = saverOn(kind);
    const ours = echoGraph(saver);
    const theirs = echoGraph(new MemorySaver());
    const config = { configurable: { thread_id: "t2" } };
    for (const graph of [ours, theirs]) for (let n = 1; n <= 3; n += 1) await graph.invoke({ messages: [human(n)] }, config);
    const pastOf = async (graph: typeof ours) => {
      for await (const snapshot of graph.getStateHistory(config))
        if (snapshot.values.messages?.length === 2 && snapshot.next.length === 0) return snapshot.config;
      throw new Error("no checkpoint after the first turn");
    };
    const forked = async (graph: typeof ours) => {
      const past = await pastOf(graph);
      await graph.invoke({ messages: [human(9)] }, past);
      return texts((await graph.getState(config)).values.messages);
    };
    const ourFork = await forked(ours);
    expect(ourFork).toEqual(await forked(theirs));
    expect(ourFork).toHaveLength(4);
  });

  it("stores the messages of a retried put once (its turn id is the checkpoint)", async () => {
    const { saver, store } = saverOn(kind);
    const graph = echoGraph(saver);
    const config = { configurable: { thread_id: "t4" } };
    await graph.invoke({ messages: [human(1)] }, config);
    const tuple = await saver.getTuple(config);
    const fresh = new AIMessage({ content: "added by hand", id: "by-hand" });
    const checkpoint = {
      ...tuple!.checkpoint,
      id: "ffffffff-retry",
      channel_values: { messages: [...(tuple!.checkpoint.channel_values.messages as BaseMessage[]), fresh] },
    };
    const versions = { messages: 99 };
    checkpoint.channel_versions = { ...checkpoint.channel_versions, ...versions };
    for (let attempt = 0; attempt < 2; attempt += 1) await saver.put(tuple!.config, checkpoint, { source: "update", step: 2, parents: {} }, versions);
    expect(await store.count({ threadId: "t4" })).toBe(3);
    const again = await saver.getTuple(config);
    expect(texts(again!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(texts(checkpoint.channel_values.messages));
  });

  it("keeps a message list memoria's format cannot hold through LangGraph's serializer, giving back what MemorySaver does", async () => {
    const { saver, store } = saverOn(kind);
    const config = { configurable: { thread_id: "t5" } };
    // A Date is not plain JSON: memoria's codec refuses it, LangGraph's serializer writes it as text.
    const odd = () => new HumanMessage({ content: "dated", id: "h-dated", additional_kwargs: { at: new Date(0) } });
    const ours = echoGraph(saver);
    const theirs = echoGraph(new MemorySaver());
    await ours.invoke({ messages: [odd()] }, config);
    await theirs.invoke({ messages: [odd()] }, config);
    expect(texts((await ours.getState(config)).values.messages)).toEqual(texts((await theirs.getState(config)).values.messages));
    expect(await store.count({ threadId: "t5" })).toBe(0);
  });

  it("refuses a run whose thread another run moved on meanwhile, saving nothing", async () => {
    const { saver } = saverOn(kind);
    const graph = echoGraph(saver);
    const config = { configurable: { thread_id: "t3" } };
    await graph.invoke({ messages: [human(1)] }, config);
    const start = await saver.getTuple(config);
    await graph.invoke({ messages: [human(2)] }, config);
    const stale = { ...start!.checkpoint, id: "1f0000000-stale" };
    const error = await saver.put(start!.config, stale, { source: "loop", step: 9, parents: {} }, {}).catch((e: unknown) => e);
    expect(ThreadBusyError.isInstance(error)).toBe(true);
    expect(await saver.getTuple({ configurable: { thread_id: "t3", checkpoint_id: stale.id } })).toBeUndefined();
    expect((await graph.getState(config)).values.messages).toHaveLength(4);
  });
});

describe("MemoriaSaver's message channels", () => {
  const Notes = Annotation.Root({ notes: Annotation<BaseMessage[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  const notesGraph = (checkpointer: BaseCheckpointSaver) =>
    new StateGraph(Notes)
      .addNode("note", (state) => ({ notes: [new AIMessage({ content: `note ${state.notes.length}`, id: `n-${state.notes.length}` })] }))
      .addEdge(START, "note")
      .addEdge("note", END)
      .compile({ checkpointer });

  it.each([
    ["stores a channel named in messageChannels once, in the thread's session", ["messages", "notes"], 6],
    ["keeps other channels of messages in their checkpoints", undefined, 0],
  ] as const)("%s", async (_, messageChannels, pooled) => {
    const { saver, store } = saverOn("sqlite", messageChannels ? { messageChannels: [...messageChannels] } : {});
    const config = { configurable: { thread_id: "notes" } };
    for (let n = 0; n < 3; n += 1) await notesGraph(saver).invoke({ notes: [new HumanMessage({ content: `q${n}`, id: `q-${n}` })] }, config);
    const theirs = notesGraph(new MemorySaver());
    for (let n = 0; n < 3; n += 1) await theirs.invoke({ notes: [new HumanMessage({ content: `q${n}`, id: `q-${n}` })] }, config);
    expect(texts((await notesGraph(saver).getState(config)).values.notes)).toEqual(texts((await theirs.getState(config)).values.notes));
    expect(await store.count({ threadId: "notes" })).toBe(pooled);
  });
});

describe("MemoriaSaver's sessions", () => {
  it("names a thread by thread_id and keyFields, so deleting a user's sessions deletes their threads", async () => {
    const { saver, store } = saverOn("sqlite", { keyFields: ["userId"] });
    const graph = echoGraph(saver);
    await graph.invoke({ messages: [human(1)] }, { configurable: { thread_id: "a", userId: "ada" } });
    await graph.invoke({ messages: [human(1)] }, { configurable: { thread_id: "b", userId: "bob" } });
    expect((await store.list({ userId: "ada" })).sessions).toEqual([{ userId: "ada", threadId: "a" }]);
    expect(await store.delete({ userId: "ada" })).toBe(1);
    expect(await saver.getTuple({ configurable: { thread_id: "a", userId: "ada" } })).toBeUndefined();
    expect(await saver.getTuple({ configurable: { thread_id: "b", userId: "bob" } })).toBeDefined();
    await saver.deleteThread("b", { userId: "bob" });
    expect((await store.list({})).sessions).toEqual([]);
  });

  it("deletes one user's thread only, and refuses a thread id that names no user", async () => {
    const { saver, store } = saverOn("sqlite", { keyFields: ["userId"] });
    const graph = echoGraph(saver);
    for (const userId of ["alice", "bob"]) await graph.invoke({ messages: [human(1)] }, { configurable: { thread_id: "t1", userId } });
    // A thread id alone would name both users' threads: refused, nothing deleted.
    await expect(saver.deleteThread("t1")).rejects.toMatchObject({ code: "INVALID_SESSION_KEY", field: "userId" });
    await expect(saver.deleteThread("t1", { tenant: "x" } as never)).rejects.toMatchObject({ code: "INVALID_SESSION_KEY", field: "tenant" });
    expect((await store.list({})).sessions).toHaveLength(2);
    await saver.deleteThread("t1", { userId: "alice" });
    expect(await saver.getTuple({ configurable: { thread_id: "t1", userId: "alice" } })).toBeUndefined();
    expect((await saver.getTuple({ configurable: { thread_id: "t1", userId: "bob" } }))?.checkpoint.channel_values.messages).toHaveLength(2);
  });

  it("keeps a checkpoint id whole through redaction, though two of its groups read as a card number", async () => {
    // A random id like this one once failed LangGraph's validation through redactStore (16 digits, Luhn-valid).
    const { saver } = saverOn("sqlite, guarded, redacted and encrypted");
    await echoGraph(saver).invoke({ messages: [human(1)] }, { configurable: { thread_id: "card-like" } });
    const tuple = await saver.getTuple({ configurable: { thread_id: "card-like" } });
    const id = "1f1e9c23-53a0-6c81-8003-006177869457";
    const stored = await saver.put(tuple!.config, { ...tuple!.checkpoint, id }, { source: "update", step: 2, parents: {} }, {});
    await saver.putWrites(stored, [["someChannel", 1]], "task-1");
    const again = await saver.getTuple({ configurable: { thread_id: "card-like", checkpoint_id: id } });
    expect(again?.checkpoint.id).toBe(id);
    expect(again?.pendingWrites).toEqual([["task-1", "someChannel", 1]]);
  });

  it("refuses a state value the serializer cannot encode (a BigInt) with a typed error, nothing written", async () => {
    const counted = Annotation.Root({ ...MessagesAnnotation.spec, total: Annotation<unknown>() });
    const graphOn = (checkpointer: BaseCheckpointSaver) =>
      new StateGraph(counted)
        .addNode("count", () => ({ total: 10n ** 20n }))
        .addEdge(START, "count")
        .addEdge("count", END)
        .compile({ checkpointer });
    const { saver, store } = saverOn("sqlite");
    const config = { configurable: { thread_id: "big" } };
    await expect(graphOn(saver).invoke({ messages: [human(1)] }, config)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining('channel "total"'),
    });
    const stored = await saver.getTuple(config);
    // The input's checkpoint may stand; no checkpoint holds the value, as text or otherwise.
    expect(JSON.stringify(stored?.checkpoint.channel_values ?? {})).not.toContain("unable to serialize");
    expect(JSON.stringify(await store.getAllState({ threadId: "big" }))).not.toContain("unable to serialize");
  });

  it("refuses a hostile thread id with a typed error before writing anything", async () => {
    const { saver, store } = saverOn("sqlite");
    const graph = echoGraph(saver);
    const error = await graph.invoke({ messages: [human(1)] }, { configurable: { thread_id: "bad\u0000id" } }).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe("INVALID_SESSION_KEY");
    expect((await store.list({})).sessions).toEqual([]);
  });
});
