import { HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type AccessRequest, ForbiddenError, RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { guardStore } from "../src/index.js";

/** Allows a caller (configurable.caller) to touch only sessions whose userId is theirs. */
const ownSessionsOnly = ({ key, config }: AccessRequest) => key.userId !== undefined && key.userId === config?.configurable?.caller;

describe("guardStore", () => {
  it("asks before every call and, denied, neither reads nor writes", async () => {
    const inner = createInMemoryStore();
    const asked: string[] = [];
    const store = guardStore(inner, ({ action, key }) => {
      asked.push(`${action} ${JSON.stringify(key)}`);
      return key.userId === "ada";
    });
    const ada = { userId: "ada", conversationId: "c" };
    const bob = { userId: "bob", conversationId: "c" };
    await store.append(ada, [new HumanMessage("hi")]);
    await inner.append(bob, [new HumanMessage("bob's")]);
    for (const denied of [
      () => store.read(bob),
      () => store.count(bob),
      () => store.getState(bob, "summary"),
      () => store.append(bob, [new HumanMessage("x")]),
      () => store.setState(bob, "summary", "x"),
      () => store.setStates(bob, { summary: "x" }),
      () => store.lock(bob),
      () => store.trim(bob, { oldest: 1 }),
      () => store.clear(bob),
      () => store.list({ userId: "bob" }),
      () => store.delete({ userId: "bob" }),
      () => store.history(bob).getMessages(),
    ]) {
      await expect(denied()).rejects.toBeInstanceOf(ForbiddenError);
    }
    expect(await inner.read(bob)).toHaveLength(1);
    expect(await inner.getState(bob, "summary")).toBeUndefined();
    expect(asked).toContain('list {"userId":"bob"}');
    expect(asked).toContain('delete {"userId":"bob"}');
    expect(await store.read(ada)).toHaveLength(1);
  });

  it("asks for read as well as append when a turn reads the history with its lock", async () => {
    const actions: string[] = [];
    const store = guardStore(createInMemoryStore(), ({ action }) => {
      actions.push(action);
      return action !== "read";
    });
    await (await store.lock({ sessionId: "s" })).release();
    await (await store.openTurn({ sessionId: "s" })).release();
    await expect(store.openTurn({ sessionId: "s" }, { read: {} })).rejects.toMatchObject({ code: "FORBIDDEN", action: "read" });
    expect(actions).toEqual(["append", "append", "append", "read"]);
  });

  it("checks as the caller given to as(config), and turns a failing hook into ForbiddenError", async () => {
    const store = guardStore(createInMemoryStore(), ownSessionsOnly);
    const key = { userId: "ada", conversationId: "c" };
    await expect(store.append(key, [new HumanMessage("x")])).rejects.toMatchObject({ code: "FORBIDDEN", action: "append" });
    await store.as({ configurable: { caller: "ada" } }).append(key, [new HumanMessage("x")]);
    await expect(store.as({ configurable: { caller: "bob" } }).read(key)).rejects.toMatchObject({ code: "FORBIDDEN", action: "read" });
    const broken = guardStore(createInMemoryStore(), () => {
      throw new Error("directory unreachable");
    });
    await expect(broken.read(key)).rejects.toThrow(/authorize hook failed \(directory unreachable\)/);
  });
});

describe("RunnableWithMessageHistory({ authorize })", () => {
  it("refuses a turn on another user's session before the model runs, reading and writing nothing", async () => {
    const store = createInMemoryStore();
    let calls = 0;
    const chain = new RunnableWithMessageHistory({
      store,
      sessionFields: ["userId", "conversationId"],
      authorize: ownSessionsOnly,
      runnable: RunnableLambda.from(async () => {
        calls++;
        return "answer";
      }),
    });
    const key = { userId: "ada", conversationId: "c" };
    await chain.invoke("hello", { configurable: { ...key, caller: "ada" } });
    await expect(chain.invoke("let me in", { configurable: { ...key, caller: "mallory" } })).rejects.toMatchObject({ code: "FORBIDDEN", action: "read" });
    expect(calls).toBe(1);
    expect(await store.count(key)).toBe(2);
  });

  it("refuses an authorize option that is not a function", () => {
    expect(
      () => new RunnableWithMessageHistory({ store: createInMemoryStore(), runnable: RunnableLambda.from(async () => "x"), authorize: true as never }),
    ).toThrow(/authorize must be a function/);
  });

  it("asks for read, then append; a read-only memory asks only for read", async () => {
    const asked: string[] = [];
    const authorize = ({ action }: AccessRequest) => {
      asked.push(action);
      return action === "read";
    };
    const runnable = RunnableLambda.from(async () => "answer");
    const chain = new RunnableWithMessageHistory({ store: createInMemoryStore(), authorize, runnable });
    await expect(chain.invoke("hi", { configurable: { sessionId: "s" } })).rejects.toMatchObject({ code: "FORBIDDEN", action: "append" });
    expect(asked).toEqual(["read", "append"]);
    asked.length = 0;
    const readOnly = new RunnableWithMessageHistory({
      store: createInMemoryStore(),
      authorize,
      runnable,
      memory: { name: "read-only", readonly: true, load: ({ read }) => read() },
    });
    expect(await readOnly.invoke("hi", { configurable: { sessionId: "s" } })).toBe("answer");
    expect(asked).toEqual(["read"]);
  });
});
