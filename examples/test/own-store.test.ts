import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { defineStore } from "@memoria/core/store-kit";
import { encryptStore, guardStore, redactStore } from "@memoria/privacy";
import { runHistoryStoreSuite } from "@memoria/testkit";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/own-store/chat.js";
import { createSqliteEngineStore, sqliteEngine } from "../src/own-store/sqlite-engine-store.js";

// The "write your own store" page's store, run through the whole store testkit: the
// page's claim that an engine on the kit is a complete store is checked here.
const folder = mkdtempSync(join(tmpdir(), "memoria-engine-store-"));
const paths = new WeakMap<object, string>();
afterAll(() => rmSync(folder, { recursive: true, force: true }));

runHistoryStoreSuite({
  name: "sqlite engine on the store kit (docs example)",
  createStore: async () => {
    const path = join(folder, `${crypto.randomUUID()}.db`);
    const store = createSqliteEngineStore(path);
    paths.set(store, path);
    return store;
  },
  createPeer: async (store) => createSqliteEngineStore(paths.get(store) as string),
});

// The same engine without its lock: the kit keeps turn locks in this process and checks
// every fence itself (the engine then always gets none), including after erasure.
runHistoryStoreSuite({
  name: "sqlite engine on the store kit, locks kept by the kit",
  createStore: async () => {
    const engine = sqliteEngine(join(folder, `${crypto.randomUUID()}.db`));
    return defineStore({ ...engine, lock: undefined, capabilities: { ...engine.capabilities, crossProcessLock: false, sharedBackend: false } });
  },
});

describe("the store kit around a failing engine", () => {
  it("gives an engine's own failure as a typed error naming the store, and a closed store as STORE_CLOSED", async () => {
    const path = join(folder, `${crypto.randomUUID()}.db`);
    const store = createSqliteEngineStore(path);
    const key = { sessionId: "s" };
    await store.append(key, [new HumanMessage("hi")]);
    // A real fault: another connection drops the table the engine reads and writes.
    const other = new Database(path);
    other.exec("DROP TABLE messages");
    other.close();
    await expect(store.read(key)).rejects.toMatchObject({
      code: "STORE_UNAVAILABLE",
      outcome: "not-stored",
      message: expect.stringContaining("sqlite-engine-example"),
    });
    await expect(store.append(key, [new HumanMessage("again")])).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "unknown" });
    await store.close();
    // Closed: refused by the kit before the engine (whose database handle is gone) is called.
    await expect(store.read(key)).rejects.toMatchObject({ code: "STORE_CLOSED" });
    await expect(store.append(key, [new HumanMessage("late")])).rejects.toMatchObject({ code: "STORE_CLOSED" });
  });
});

describe("capabilities the kit declares from an engine's calls", () => {
  it("an engine without trim or prune: declared false, trim rejects UNSUPPORTED and removes nothing, prune resolves 0", async () => {
    const engine = sqliteEngine(join(folder, `${crypto.randomUUID()}.db`));
    const full = defineStore(engine);
    expect(full.capabilities).toMatchObject({ trim: true, prune: false });
    await full.close();
    const store = defineStore({ ...sqliteEngine(join(folder, `${crypto.randomUUID()}.db`)), trim: undefined });
    expect(store.capabilities).toEqual({ ttl: false, crossProcessLock: true, sharedBackend: true, trim: false, prune: false });
    const key = { sessionId: "s" };
    await store.append(key, [new HumanMessage("one"), new HumanMessage("two")]);
    await expect(store.trim(key, { oldest: 1 })).rejects.toMatchObject({ code: "UNSUPPORTED", message: expect.stringContaining("sqlite-engine-example") });
    expect(await store.count(key)).toBe(2);
    expect(await store.prune()).toBe(0);
    await expect(store.prune({ batchSize: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(store.recallIndex()).toBeUndefined();
    await store.ready();
    await store.close();
  });

  it("the privacy wrappers over a store that cannot trim: declared so, UNSUPPORTED, and the sealed session unharmed", async () => {
    const inner = defineStore({ ...sqliteEngine(join(folder, `${crypto.randomUUID()}.db`)), trim: undefined });
    const sealed = encryptStore(inner, { keys: { A: randomBytes(32) }, activeKeyId: "A" });
    const key = { sessionId: "s" };
    for (const wrapper of [sealed, redactStore(sealed), guardStore(sealed, () => true)]) {
      expect(wrapper.capabilities.trim).toBe(false);
      await sealed.append(key, [new HumanMessage("one"), new HumanMessage("two")]);
      // A trim that would empty the session: refused before encryption marks where its positions go on.
      const state = await inner.getAllState(key);
      await expect(wrapper.trim(key, { oldest: 10 })).rejects.toMatchObject({ code: "UNSUPPORTED" });
      expect(await inner.getAllState(key)).toEqual(state); // nothing written
      await sealed.append(key, [new HumanMessage("three")]);
      expect((await wrapper.read(key)).map((message) => message.text).slice(-3)).toEqual(["one", "two", "three"]);
    }
    expect(await sealed.count(key)).toBe(9);
    await inner.close();
  });
});

describe("own-store example", () => {
  it("remembers across a reopened file", async () => {
    const lines: string[] = [];
    await main((line) => lines.push(line));
    expect(lines).toEqual([
      "> [offline model] Nice to meet you, Ada! I was given 0 earlier messages.",
      "> [offline model] Your name is Ada. I was given 2 earlier messages.",
      '(session "ada" holds 4 messages)',
    ]);
  });
});
