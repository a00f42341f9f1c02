import { randomBytes } from "node:crypto";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import {
  type HistoryStore,
  type OpenTurn,
  RunnableWithMessageHistory,
  type TurnOptions,
  createInMemoryStore,
  encodeSessionKey,
  scopeKeyOf,
} from "@memoria/core";
import { describe, expect, it } from "vitest";
import { SEALED_ROLE, encryptStore, guardStore, redactStore } from "../src/index.js";

const keyA = randomBytes(32);
const options = { keys: { A: keyA }, activeKeyId: "A" };
const words = (messages: BaseMessage[]) => messages.map((m) => String(m.content));

describe("encryptStore", () => {
  it("hands the inner store only sealed generic messages and sealed state", async () => {
    const inner = createInMemoryStore();
    const store = encryptStore(inner, options);
    const key = { sessionId: "s" };
    await store.append(key, [new HumanMessage({ content: "the vault code is 1234", id: "h1" })]);
    await store.setState(key, "summary", { text: "a vault code was given" });
    const [raw] = await inner.read(key, { sealed: true });
    expect(raw!.getType()).toBe("generic");
    expect((raw as unknown as { role: string }).role).toBe(SEALED_ROLE);
    expect(String(raw!.content)).toMatch(/^ms2\.[A-Za-z0-9_-]+\.0\.0\.0\.\.[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(await inner.getState(key, "summary"))).not.toContain("vault");
    const [back] = await store.read(key);
    expect(back).toBeInstanceOf(HumanMessage);
    expect(back!.id).toBe("h1");
  });

  it("checks its options and keeps memoria.* state names for itself", async () => {
    const inner = createInMemoryStore();
    expect(() => encryptStore(inner, { keys: { A: randomBytes(16) }, activeKeyId: "A" })).toThrow(/must be 32 bytes/);
    // A key read from an unset environment variable: a typed error that says so, not Buffer's TypeError.
    const unset = () => encryptStore(inner, { keys: { A: process.env.MEMORIA_TEST_NEVER_SET as string }, activeKeyId: "A" });
    expect(unset).toThrow(/Key "A" must be 32 bytes .* got undefined \(is the variable it comes from set\?\)/);
    expect(unset).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => encryptStore(inner, { keys: { A: keyA }, activeKeyId: "B" })).toThrow(/active key "B" is not among/);
    expect(() => encryptStore(inner, { keys: { "bad id": keyA }, activeKeyId: "bad id" })).toThrow(/letters, digits/);
    expect(() => encryptStore(inner, { ...options, hashIds: { secret: randomBytes(8) } })).toThrow(/at least 32 bytes/);
    await expect(encryptStore(inner, options).setState({ sessionId: "s" }, "memoria.datakey", "x")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    // base64 text works as key material
    const text = encryptStore(inner, { keys: { A: keyA.toString("base64") }, activeKeyId: "A" });
    await text.append({ sessionId: "b64" }, [new HumanMessage("x")]);
    expect(words(await encryptStore(inner, options).read({ sessionId: "b64" }))).toEqual(["x"]);
  });

  it("shares one frozen message per cached record between reads; frozen: false gives each read copies", async () => {
    const inner = createInMemoryStore({ frozen: false });
    const key = { sessionId: "frozen" };
    const writer = encryptStore(inner, options);
    await writer.append(key, [new HumanMessage({ content: "kept", additional_kwargs: { tags: ["a"] } })]);
    // A store that sealed the record, and one that opens it first: both share from then on.
    for (const store of [writer, encryptStore(inner, options)]) {
      const [first] = await store.read(key);
      const [second] = await store.read(key);
      expect(second).toBe(first);
      expect(Object.isFrozen(first!.additional_kwargs.tags)).toBe(true);
      expect(() => (first!.additional_kwargs.tags as string[]).push("b")).toThrow(TypeError);
    }
    const copying = encryptStore(inner, { ...options, frozen: false });
    const [copy] = await copying.read(key);
    (copy!.additional_kwargs.tags as string[]).push("b");
    const [again] = await copying.read(key);
    expect(again).not.toBe(copy);
    expect(again!.additional_kwargs.tags).toEqual(["a"]);
    // A record the cache does not keep (larger than a quarter of it) comes as a copy of its own.
    const small = encryptStore(inner, { ...options, plaintextCache: 1_000 });
    await small.append(key, [new HumanMessage("x".repeat(500))]);
    const [, big] = await small.read(key);
    expect(big).not.toBe((await small.read(key))[1]);
    expect(() => encryptStore(inner, { ...options, frozen: "yes" as never })).toThrow(/frozen must be true or false, got yes/);
  });

  it("fetches keys from a function (a KMS) once per key id", async () => {
    const asked: string[] = [];
    const kms = async (id: string) => {
      asked.push(id);
      return id === "A" ? keyA : undefined;
    };
    const store = encryptStore(createInMemoryStore(), { keys: kms, activeKeyId: "A" });
    for (let i = 0; i < 5; i++) await store.append({ sessionId: `s${i}` }, [new HumanMessage(`m${i}`)]);
    expect(words(await store.read({ sessionId: "s3" }))).toEqual(["m3"]);
    expect(asked).toEqual(["A"]);
    const missing = encryptStore(createInMemoryStore(), { keys: async () => undefined, activeKeyId: "A" });
    await expect(missing.append({ sessionId: "s" }, [new HumanMessage("x")])).rejects.toThrow(/gave no key for the active key id "A"/);
    const inner = createInMemoryStore();
    const down = encryptStore(inner, {
      keys: async () => {
        throw new Error("connect ECONNREFUSED kms");
      },
      activeKeyId: "A",
    });
    await expect(down.append({ sessionId: "s" }, [new HumanMessage("x")])).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored" });
    expect(await inner.count({ sessionId: "s" })).toBe(0);
  });

  it("never writes with a stale data key: a session erased and started again by another instance", async () => {
    const inner = createInMemoryStore();
    const first = encryptStore(inner, options);
    const second = encryptStore(inner, options);
    const key = { sessionId: "s" };
    await first.append(key, [new HumanMessage("one")]);
    expect(words(await first.read(key))).toEqual(["one"]); // first caches the data key
    await second.clear(key);
    await second.append(key, [new HumanMessage("two")]); // a new data key
    await first.append(key, [new HumanMessage("three")]);
    await first.setState(key, "summary", "three");
    expect(words(await second.read(key))).toEqual(["two", "three"]);
    expect(await second.getState(key, "summary")).toBe("three");

    const chain = new RunnableWithMessageHistory({ store: first, runnable: RunnableLambda.from(async (m: BaseMessage[]) => `saw ${m.length}`) });
    await second.clear(key);
    await second.append(key, [new HumanMessage("four")]);
    expect(await chain.invoke("five", { configurable: key })).toBe("saw 2");
    expect(words(await second.read(key))).toEqual(["four", "five", "saw 2"]);
  });

  it("composes: guard(redact(encrypt(store))) in a turn", async () => {
    const inner = createInMemoryStore();
    const isAda = ({ config }: { config?: { configurable?: Record<string, unknown> } }) => config?.configurable?.caller === "ada";
    const store = guardStore(redactStore(encryptStore(inner, options)), isAda);
    // A turn's checks get the call's config: the wrapper asks the hook itself.
    const chain = new RunnableWithMessageHistory({
      store: store.inner,
      authorize: isAda,
      runnable: RunnableLambda.from(async (m: BaseMessage[]) => `seen: ${m.at(-1)?.content}`),
    });
    const config = { configurable: { sessionId: "s", caller: "ada" } };
    expect(await chain.invoke("mail me at ada@example.com", config)).toBe("seen: mail me at ada@example.com");
    expect(words(await store.as(config).read({ sessionId: "s" }))).toEqual(["mail me at [email removed]", "seen: mail me at [email removed]"]);
    expect(JSON.stringify(await inner.read({ sessionId: "s" }, { sealed: true }))).not.toContain("mail me");
    await expect(store.read({ sessionId: "s" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(chain.invoke("hi", { configurable: { sessionId: "s", caller: "eve" } })).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});

describe("encryptStore with unfenced writers at once", () => {
  // Every store has a turn lock now (the contract requires one), so the wrapper takes it
  // around each unfenced write: ten at once still seal, read back and keep positions.
  it("seals, reads back and keeps positions, one writer at a time", async () => {
    const store = encryptStore(createInMemoryStore(), options);
    const key = { sessionId: "no-locks" };
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.append(key, [new HumanMessage(`m${i}`)])));
    await store.setState(key, "summary", "ten");
    expect((await store.read(key)).map((m) => String(m.content)).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`).sort());
    expect(await store.getState(key, "summary")).toBe("ten");
  });
});

describe("encryptStore's recall index", () => {
  const scope = encodeSessionKey(scopeKeyOf({ userId: "ada" }));
  const item = (session: string, position: number, at: number, vector: number[]) => ({ scope, session, position, at, vector });

  it("is the store's own through every wrapper, and another instance's writes reach a cached copy", async () => {
    const inner = createInMemoryStore();
    const one = encryptStore(inner, options);
    const two = encryptStore(inner, options); // as another process over the same data: a cache of its own
    for (const wrapped of [one, redactStore(one), guardStore(one, () => true)]) expect(wrapped.recallIndex()?.name).toBe("sealed");
    await one.recallIndex().upsert([item("session-one", 0, 1, [1, 0]), item("session-one", 1, 2, [0, 1])]);
    expect((await two.recallIndex().search(scope, [1, 0], 1)).map((hit) => hit.position)).toEqual([0]);
    await one.recallIndex().upsert([item("session-two", 0, 3, [1, 0.1]), item("session-one", 0, 4, [0.5, 1])]); // s1's first vector replaced: no longer the nearest
    expect((await two.recallIndex().search(scope, [1, 0], 3)).map((hit) => [hit.session, hit.position])).toEqual([
      ["session-two", 0],
      ["session-one", 0],
      ["session-one", 1],
    ]);
    expect(JSON.stringify(await inner.getAllState(scopeKeyOf({ userId: "ada" })))).not.toMatch(/session-/); // sessions and vectors sealed
  });

  it("removes by session and by age, refuses a remove without a scope, and is rekeyed with the scope record", async () => {
    const inner = createInMemoryStore();
    const store = encryptStore(inner, options);
    await store.recallIndex().upsert([item("s1", 0, 1, [1, 0]), item("s1", 1, 5, [1, 0]), item("s2", 0, 1, [1, 0])]);
    expect(await store.recallIndex().remove({ scope, sessions: ["s2"] })).toBe(1);
    expect(await store.recallIndex().remove({ scope, before: 2 })).toBe(1);
    await expect(store.recallIndex().remove({ sessions: ["s1"] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const keyB = randomBytes(32);
    expect(await encryptStore(inner, { keys: { A: keyA, B: keyB }, activeKeyId: "B" }).rekey({ scopes: [["userId"]] })).toEqual({ seen: 1, rewrapped: 1 }); // no conversation names the scope: named here
    const onlyB = encryptStore(inner, { keys: { B: keyB }, activeKeyId: "B" });
    expect((await onlyB.recallIndex().search(scope, [1, 0], 5)).map((hit) => [hit.session, hit.position])).toEqual([["s1", 1]]);
  });
});

/** `inner` with every call counted, and the saves of the turns it opens ("openTurn+read": a turn that reads its history). */
function countedStore(inner: HistoryStore): { store: HistoryStore; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || name === "history") return value;
      return async (...args: unknown[]) => {
        if (name !== "openTurn") {
          calls.push(String(name));
          return value.apply(target, args);
        }
        calls.push((args[1] as TurnOptions | undefined)?.read ? "openTurn+read" : "openTurn");
        const turn = (await value.apply(target, args)) as OpenTurn;
        const save: OpenTurn["save"] = (messages, saveOptions) => {
          calls.push("save");
          return turn.save(messages, saveOptions);
        };
        return { lock: turn.lock, history: turn.history, save, release: turn.release };
      };
    },
  });
  return { store, calls };
}

describe("a turn through the wrappers costs no extra store call once the session has its key", () => {
  const stacks: [string, (inner: HistoryStore) => HistoryStore][] = [
    ["encryptStore", (inner) => encryptStore(inner, options)],
    ["redactStore over encryptStore", (inner) => redactStore(encryptStore(inner, options))],
    ["guardStore over encryptStore", (inner) => guardStore(encryptStore(inner, options), () => true)],
    [
      "encryptStore over guardStore",
      (inner) =>
        encryptStore(
          guardStore(inner, () => true),
          options,
        ),
    ],
  ];
  for (const [name, wrap] of stacks) {
    it(`${name}: the inner store's turn, read with its lock, and its save`, async () => {
      const { store, calls } = countedStore(createInMemoryStore());
      const seen: number[] = [];
      const runnable = RunnableLambda.from(async (messages: BaseMessage[]) => {
        seen.push(messages.length);
        return "ok";
      });
      const chain = new RunnableWithMessageHistory({ store: wrap(store), runnable });
      const config = { configurable: { sessionId: "s" } };
      await chain.invoke("first", config);
      calls.length = 0;
      await chain.invoke("second", config);
      expect(calls).toEqual(["openTurn+read", "save"]);
      expect(seen).toEqual([1, 3]); // the second turn saw the first
    });
  }
});
