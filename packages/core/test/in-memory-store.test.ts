import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { describe, expect, it, vi } from "vitest";
import { MemoriaError, RunnableWithMessageHistory, type SessionKey, createInMemoryStore } from "../src/index.js";
import { SessionLocks } from "../src/store-kit.js";
import { transcript, withTurns } from "./helpers.js";

// The shared contract is checked by @memoria/testkit (packages/testkit/test);
// these are the in-memory store's own promises.
describe("in-memory store", () => {
  it("drops the least recently used session past maxSessions", async () => {
    const evicted: SessionKey[] = [];
    const store = createInMemoryStore({ maxSessions: 2, onEvict: (key) => evicted.push(key) });
    await store.append({ sessionId: "a" }, [new HumanMessage("a")]);
    await store.append({ sessionId: "b" }, [new HumanMessage("b")]);
    await store.read({ sessionId: "a" }); // a is now the most recently used
    await store.append({ sessionId: "c" }, [new HumanMessage("c")]);
    expect(evicted).toEqual([{ sessionId: "b" }]);
    expect(await store.count({ sessionId: "a" })).toBe(1);
    expect(await store.count({ sessionId: "b" })).toBe(0);
  });

  it("refuses nonsense limits and works no more once closed", async () => {
    expect(() => createInMemoryStore({ maxSessions: 0 })).toThrow(MemoriaError);
    expect(() => createInMemoryStore({ ttlSeconds: -1 })).toThrow(MemoriaError);
    const store = createInMemoryStore();
    await store.close();
    await store.close();
    await expect(store.read({ sessionId: "a" })).rejects.toMatchObject({ code: "STORE_CLOSED" });
  });

  it("by default, reads share the stored frozen objects (no rebuilding) in new arrays", async () => {
    const store = createInMemoryStore();
    const key = { sessionId: "a" };
    const appended = new AIMessage({ content: "hi", tool_calls: [{ id: "c1", name: "f", args: { x: [1] } }] });
    await store.append(key, [new HumanMessage("hello"), appended]);
    const [first, second] = [await store.read(key), await store.read(key)];
    expect(first).not.toBe(second);
    expect(Object.isFrozen(first)).toBe(false); // a plain array: V8 walks frozen ones far slower
    expect(first[1]).toBe(second[1]);
    expect(first[1]).not.toBe(appended); // what the caller appended stays the caller's, unfrozen
    expect([Object.isFrozen(appended), Object.isFrozen(appended.tool_calls![0]!.args.x), Object.isFrozen(appended.additional_kwargs)]).toEqual([
      false,
      false,
      false,
    ]);
    expect(Object.isFrozen((first[1] as AIMessage).tool_calls![0]!.args.x)).toBe(true);
    expect((await store.read(key, { last: 1 }))[0]).toBe(first[1]);
  });

  it("freezes every object a stored message holds, its empty ones shared, and they read and serialize as an unfrozen copy does", async () => {
    const store = createInMemoryStore();
    const key = { sessionId: "empties" };
    const sent = [new HumanMessage("hello"), new AIMessage("hi"), new AIMessage({ content: "x", additional_kwargs: { a: {} }, response_metadata: { b: [] } })];
    await store.append(key, sent);
    const frozen = await store.read(key);
    const everyObject = (value: unknown, seen = new Set<object>()): object[] => {
      if (typeof value !== "object" || value === null || seen.has(value)) return [];
      seen.add(value);
      return [value, ...Object.values(value).flatMap((inner) => everyObject(inner, seen))];
    };
    for (const message of frozen) expect(everyObject(message).filter((part) => !Object.isFrozen(part))).toEqual([]);
    const [human, ai, full] = frozen as [HumanMessage, AIMessage, AIMessage];
    expect(() => (ai.tool_calls as unknown[]).push({})).toThrow(TypeError);
    expect(() => Object.assign(human.additional_kwargs, { x: 1 })).toThrow(TypeError);
    expect(() => (human.lc_namespace as string[]).push("x")).toThrow(TypeError);
    // the empties given non-empty stay as given, and everything serializes as the sent messages do
    expect(full.additional_kwargs).toEqual({ a: {} });
    expect(full.response_metadata).toEqual({ b: [] });
    expect(frozen.map((message) => JSON.stringify(message))).toEqual(sent.map((message) => JSON.stringify(message)));
    expect(frozen.map((message) => message.toDict())).toEqual(sent.map((message) => message.toDict()));
    // a message that changes the shared parts cannot exist: a second session reads its own, equal, frozen ones
    await store.append({ sessionId: "other" }, [new HumanMessage("hello")]);
    expect((await store.read({ sessionId: "other" }))[0]?.additional_kwargs).toEqual({});
  });

  it.each([true, false])("gives the default turn its history and input in one new array, leaving the session unchanged (frozen: %s)", async (frozen) => {
    const store = createInMemoryStore({ frozen });
    const key = { sessionId: "joined" };
    await store.append(key, [new HumanMessage("a"), new AIMessage("b")]);
    const seen: BaseMessage[][] = [];
    const chain = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from((messages: BaseMessage[]) => {
        seen.push(messages);
        messages.push(new HumanMessage("the runnable's own")); // its input is its own to change
        return new AIMessage(`saw ${messages.length - 1}`);
      }),
      store,
    });
    const read = vi.spyOn(store, "read");
    await chain.invoke("c", { configurable: { sessionId: "joined" } });
    await chain.invoke("e", { configurable: { sessionId: "joined" } });
    expect(read).not.toHaveBeenCalled(); // the joined read, not a read and a concat
    expect(seen.map((messages) => messages.length)).toEqual([4, 6]);
    expect((await store.read(key)).map((m) => m.content)).toEqual(["a", "b", "c", "saw 3", "e", "saw 5"]);
  });

  it("strips an echoed thread by what it sent, even when the runnable added to its input (the joined read and the ordinary one alike)", async () => {
    // An agent-like runnable: adds a note to the messages it was given and returns the whole thread.
    const agent = RunnableLambda.from((messages: BaseMessage[]) => {
      messages.push(new AIMessage("a note"));
      return [...messages, new AIMessage("the answer")];
    });
    const stored: string[][] = [];
    for (const traced of [false, true]) {
      const store = createInMemoryStore();
      await store.append({ sessionId: "t" }, [new HumanMessage("earlier"), new AIMessage("reply")]);
      const chain = new RunnableWithMessageHistory({ runnable: agent, store });
      const callbacks = traced ? [{ handleChainStart: () => {} }] : undefined; // traced: the ordinary read
      await chain.invoke("now", { configurable: { sessionId: "t" }, callbacks });
      stored.push((await store.read({ sessionId: "t" })).map((m) => m.content as string));
    }
    expect(stored[0]).toEqual(["earlier", "reply", "now", "a note", "the answer"]);
    expect(stored[1]).toEqual(stored[0]);
  });

  it("takes the ordinary read where the history goes under its own key, or the call is traced", async () => {
    const store = createInMemoryStore();
    let joined = 0;
    const counted = withTurns(store, (turn) => ({
      historyWith: (after) => {
        joined++;
        return turn.historyWith!(after);
      },
    }));
    const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder("history"), ["human", "{question}"]]);
    const keyed = new RunnableWithMessageHistory({
      runnable: prompt.pipe(new FakeListChatModel({ responses: ["one"] })),
      store: counted,
      inputMessagesKey: "question",
      historyMessagesKey: "history",
    });
    await keyed.invoke({ question: "hi" }, { configurable: { sessionId: "keyed" } });
    const plain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => new AIMessage("ok")), store: counted });
    const runs: string[] = [];
    await plain.invoke("hi", {
      configurable: { sessionId: "traced" },
      callbacks: [{ handleChainStart: (_chain, _inputs, _runId, _parent, _tags, _metadata, _type, name) => void runs.push(name as string) }],
    });
    expect(joined).toBe(0);
    expect(runs).toContain("loadHistory");
    await plain.invoke("again", { configurable: { sessionId: "traced" } }); // untraced, the whole history: joined
    expect(joined).toBe(1);
    expect((await store.read({ sessionId: "traced" })).map((m) => m.content)).toEqual(["hi", "ok", "again", "ok"]);
  });

  it("keeps a given turn id, and not one made up for a single call (keepTurnId: false)", async () => {
    const store = createInMemoryStore();
    const key = { sessionId: "ids" };
    expect((await store.append(key, [new HumanMessage("a")], { turnId: "given" })).appended).toBe(true);
    expect((await store.append(key, [new HumanMessage("a again")], { turnId: "given" })).appended).toBe(false);
    // A one-off id is only repeated after an unknown outcome, which this store never has: it is not kept.
    for (const text of ["b", "c"]) {
      const turn = await store.openTurn(key);
      expect((await turn.save([new HumanMessage(text)], { turnId: "one-off", keepTurnId: false })).appended).toBe(true);
      await turn.release();
    }
    expect((await store.read(key)).map((m) => m.content)).toEqual(["a", "b", "c"]);
  });

  it("with frozen messages (the default), serves a prompt + model chain turn after turn", async () => {
    const prompt = ChatPromptTemplate.fromMessages([["system", "Be brief."], new MessagesPlaceholder("history"), ["human", "{question}"]]);
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(new FakeListChatModel({ responses: ["one", "two", "three"] })),
      store,
      inputMessagesKey: "question",
      historyMessagesKey: "history",
    });
    const config = { configurable: { sessionId: "a" } };
    for (const question of ["q1", "q2"]) await chain.invoke({ question }, config);
    const streamed = [];
    for await (const chunk of await chain.stream({ question: "q3" }, config)) streamed.push(chunk);
    expect(streamed.length).toBeGreaterThan(0);
    const history = await store.read({ sessionId: "a" });
    expect(transcript(history)).toEqual(["human: q1", "ai: one", "human: q2", "ai: two", "human: q3", "ai: three"]);
  });
});

describe("session locks", () => {
  it("queues holders of one id in order and frees the id when idle", async () => {
    const locks = new SessionLocks();
    const order: number[] = [];
    const run = async (n: number) => {
      const release = await locks.acquire("s");
      order.push(n);
      await new Promise((r) => setTimeout(r, 1));
      release();
    };
    await Promise.all([run(1), run(2), run(3)]);
    expect(order).toEqual([1, 2, 3]);
    expect(locks.isBusy("s")).toBe(false);
  });

  it("gives up a waiting place on abort without blocking those behind", async () => {
    const locks = new SessionLocks();
    const first = await locks.acquire("s");
    const controller = new AbortController();
    const aborted = locks.acquire("s", controller.signal);
    const third = locks.acquire("s");
    controller.abort(new Error("gave up"));
    await expect(aborted).rejects.toThrow("gave up");
    first();
    const releaseThird = await third;
    releaseThird();
    expect(locks.isBusy("s")).toBe(false);
  });
});
