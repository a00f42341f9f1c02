import { InMemoryStore, type Item } from "@langchain/langgraph-checkpoint";
import { HashingEmbeddings } from "@memoria/memory/long-term";
import { createKeyFilter, scopeKeyOf } from "@memoria/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoriaStore } from "../src/index.js";
import { itemName } from "../src/store-items.js";
import { type EmbeddedKind, type FreshStore, freshStore } from "./stores.js";

const opened: FreshStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fresh) => fresh.dispose()));
});
const byUser = { fields: ["userId"], of: (namespace: readonly string[]) => ({ userId: namespace[1] }) };
function storeOn(kind: EmbeddedKind, options: Omit<ConstructorParameters<typeof MemoriaStore>[0], "store"> = {}) {
  const fresh = freshStore(kind);
  opened.push(fresh);
  return { ours: new MemoriaStore({ store: fresh.store, ...options }), base: fresh.store };
}

/** An item without its times, which differ between two stores by construction. */
const plain = (item: Item | null) => item && { namespace: item.namespace, key: item.key, value: item.value };
const sorted = (items: (Item | null)[]) => items.map(plain).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe.each(["memory", "sqlite", "sqlite, encrypted"] as EmbeddedKind[])("MemoriaStore on %s", (kind) => {
  it("answers get, search, filters and listNamespaces as LangGraph's InMemoryStore does", async () => {
    const { ours } = storeOn(kind, { scope: byUser });
    const theirs = new InMemoryStore();
    for (const store of [ours, theirs]) {
      await store.put(["memories", "ada"], "m1", { text: "likes tea", kind: "preference", weight: 3 });
      await store.put(["memories", "ada"], "m2", { text: "lives in Paris", kind: "fact", weight: 5 });
      await store.put(["memories", "bob"], "m1", { text: "likes coffee", kind: "preference", weight: 1 });
      await store.put(["memories", "ada", "work"], "w1", { text: "works on compilers", kind: "fact", weight: 4 });
      await store.put(["memories", "ada"], "m1", { text: "likes green tea", kind: "preference", weight: 3 });
      await store.delete(["memories", "bob"], "m1");
    }
    for (const [namespace, key] of [
      [["memories", "ada"], "m1"],
      [["memories", "bob"], "m1"],
      [["memories", "ada", "work"], "w1"],
    ] as const) {
      expect(plain(await ours.get([...namespace], key))).toEqual(plain(await theirs.get([...namespace], key)));
    }
    const searches: [string[], Parameters<InMemoryStore["search"]>[1]][] = [
      [["memories"], {}],
      [["memories", "ada"], { filter: { kind: "fact" } }],
      [["memories"], { filter: { weight: { $gte: 4 } } }],
      [[], { filter: { kind: { $in: ["preference"] } } }],
      [["memories", "bob"], {}],
    ];
    for (const [prefix, options] of searches) expect(sorted(await ours.search(prefix, options))).toEqual(sorted(await theirs.search(prefix, options)));
    const listings: Parameters<InMemoryStore["listNamespaces"]>[0][] = [
      {},
      { prefix: ["memories"] },
      { suffix: ["work"] },
      { maxDepth: 2 },
      { prefix: ["memories", "*"] },
    ];
    // InMemoryStore goes on listing a namespace whose last item was deleted; memoria, like
    // LangGraph's PostgresStore, lists the namespaces that hold items.
    const held = (namespaces: string[][]) => namespaces.filter((namespace) => namespace.join(":") !== "memories:bob");
    for (const options of listings) expect(await ours.listNamespaces(options)).toEqual(held(await theirs.listNamespaces(options)));
  });

  it("keeps an item's creation time across updates and finds items by meaning with an index", async () => {
    const { ours } = storeOn(kind, { scope: byUser, index: { embeddings: new HashingEmbeddings(), fields: ["text"] } });
    await ours.put(["memories", "ada"], "tea", { text: "Ada drinks green tea every morning" });
    await ours.put(["memories", "ada"], "city", { text: "Ada moved to Paris last spring" });
    const first = await ours.get(["memories", "ada"], "tea");
    await new Promise((resolve) => setTimeout(resolve, 5));
    await ours.put(["memories", "ada"], "tea", { text: "Ada drinks green tea every morning and evening" });
    const second = await ours.get(["memories", "ada"], "tea");
    expect(second?.createdAt).toEqual(first?.createdAt);
    expect(second!.updatedAt.getTime()).toBeGreaterThan(first!.updatedAt.getTime());
    const [best] = await ours.search(["memories", "ada"], { query: "which city does she live in, Paris?" });
    expect(best?.key).toBe("city");
    expect(typeof best?.score).toBe("number");
  });
});

describe.each(["memory", "sqlite", "sqlite, encrypted"] as EmbeddedKind[])("MemoriaStore's expiring items on %s", (kind) => {
  const ada = ["memories", "ada"];
  const start = Date.parse("2026-11-25T10:00:00.000Z");
  const at = (seconds: number) => vi.setSystemTime(start + seconds * 1_000);
  const keys = async (store: MemoriaStore, options: { refreshTtl?: boolean } = {}) => (await store.search(ada, options)).map((item) => item.key).sort();
  afterEach(() => {
    vi.useRealTimers();
  });

  it("expires an item ttl minutes after its write or the last read that returned it; ttl null never expires", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(0);
    const { ours, base } = storeOn(kind, { scope: byUser, ttl: { defaultTtl: 10 } });
    await ours.put(ada, "short", { text: "a minute" }, undefined, { ttl: 1 });
    await ours.put(ada, "default", { text: "ten minutes" });
    await ours.put(ada, "forever", { text: "always" }, undefined, { ttl: null });
    at(50);
    expect((await ours.get(ada, "short"))?.value).toEqual({ text: "a minute" }); // renewed: now until 110 s
    at(100);
    expect(await keys(ours, { refreshTtl: false })).toEqual(["default", "forever", "short"]);
    at(115);
    expect(await ours.get(ada, "short")).toBeNull();
    expect(await keys(ours)).toEqual(["default", "forever"]); // renews "default": now until 715 s
    expect(await ours.listNamespaces()).toEqual([ada]);
    at(660);
    expect(await ours.get(ada, "default", { refreshTtl: false })).not.toBeNull();
    at(720);
    expect(await keys(ours)).toEqual(["forever"]);
    at(100_000);
    expect(await keys(ours)).toEqual(["forever"]);

    // Swept, an expired item's value leaves the store; written again, it is a new item.
    expect(await ours.sweep()).toBe(2);
    expect(await ours.sweep()).toBe(0);
    const scope = scopeKeyOf(createKeyFilter({ userId: "ada" }));
    expect(await base.getState(scope, itemName(ada, "short"))).not.toHaveProperty("value");
    expect(await base.getState(scope, itemName(ada, "forever"))).toHaveProperty("value", { text: "always" });
    await ours.put(ada, "short", { text: "back" });
    expect((await ours.get(ada, "short"))?.createdAt).toEqual(new Date(start + 100_000_000));
  });

  it("never loses a write to a read's renewal or to a sweep that listed the item before it was written", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(0);
    const { base } = storeOn(kind, { scope: byUser });
    // The store as the MemoriaStore under test sees it: `meanwhile` runs, through a second
    // MemoriaStore on the same store, between a read's first store call and its writes.
    let meanwhile: (() => Promise<void>) | undefined;
    const runMeanwhile = async () => {
      const work = meanwhile;
      meanwhile = undefined;
      await work?.();
    };
    const seen = new Proxy(base, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property === "setState") {
          return async (...args: Parameters<typeof base.setState>) => {
            await runMeanwhile();
            return target.setState(...args);
          };
        }
        if (property === "setStates" && target.setStates) {
          return async (...args: Parameters<NonNullable<typeof base.setStates>>) => {
            await runMeanwhile();
            return target.setStates(...args);
          };
        }
        if (property === "getAllState") return async (...args: [never]) => Object.assign(await target.getAllState(...args), await runMeanwhile());
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const ours = new MemoriaStore({ store: seen, scope: byUser, ttl: { defaultTtl: 1 } });
    const other = new MemoriaStore({ store: base, scope: byUser });
    await other.put(ada, "m", { text: "first" }, undefined, { ttl: 1 });

    at(30);
    meanwhile = () => other.put(ada, "m", { text: "second" }, undefined, { ttl: 1 });
    expect((await ours.get(ada, "m"))?.value).toEqual({ text: "first" }); // read before the write, renewed after it
    expect((await other.get(ada, "m", { refreshTtl: false }))?.value).toEqual({ text: "second" });
    at(100); // "second" expired at 90 s; the renewal of "first" does not keep it
    expect(await other.get(ada, "m", { refreshTtl: false })).toBeNull();

    meanwhile = () => other.put(ada, "m", { text: "third" }, undefined, { ttl: 1 });
    expect(await ours.sweep()).toBe(0); // listed expired, written again before it was emptied
    expect((await other.get(ada, "m", { refreshTtl: false }))?.value).toEqual({ text: "third" });
  });

  it("does not renew on read when refreshOnRead is false", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(0);
    const { ours } = storeOn(kind, { scope: byUser, ttl: { defaultTtl: 1, refreshOnRead: false } });
    await ours.put(ada, "m", { text: "x" });
    at(50);
    expect(await ours.get(ada, "m")).not.toBeNull();
    at(70);
    expect(await ours.get(ada, "m")).toBeNull();
  });
});

describe("MemoriaStore's scopes", () => {
  it("keeps a user's items in the user's scope record, so deleting the user erases them", async () => {
    const { ours, base } = storeOn("sqlite", { scope: byUser });
    await ours.put(["memories", "ada"], "m1", { text: "likes tea" });
    await ours.put(["memories", "bob"], "m1", { text: "likes coffee" });
    expect(await base.delete({ userId: "ada" })).toBe(1);
    expect(await ours.get(["memories", "ada"], "m1")).toBeNull();
    expect((await ours.get(["memories", "bob"], "m1"))?.value).toEqual({ text: "likes coffee" });
  });

  it("refuses values that are not JSON objects and namespaces LangGraph forbids, with typed errors, writing nothing", async () => {
    const { ours } = storeOn("sqlite", { scope: byUser });
    await expect(ours.put(["memories", "ada"], "x", { when: () => 1 } as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(ours.put(["memories", "ada"], "x", [1, 2] as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(ours.put(["memories", "a.b"], "x", { a: 1 })).rejects.toThrow(/periods/);
    await expect(ours.put(["memories"], "x", { a: 1 })).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
    for (const ttl of [0, -1, Number.NaN, "5"]) {
      await expect(ours.put(["memories", "ada"], "x", { a: 1 }, undefined, { ttl: ttl as number })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringContaining("minutes"),
      });
    }
    expect(() => new MemoriaStore({ store: ours.store, ttl: { defaultTtl: -5 } })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(await ours.search([])).toEqual([]);
  });
});
