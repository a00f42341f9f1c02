import { InMemoryStore, type Item } from "@langchain/langgraph-checkpoint";
import { HashingEmbeddings } from "@memoria/memory";
import { afterEach, describe, expect, it } from "vitest";
import { MemoriaStore } from "../src/index.js";
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
    for (const [namespace, key] of [[["memories", "ada"], "m1"], [["memories", "bob"], "m1"], [["memories", "ada", "work"], "w1"]] as const) {
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
    const listings: Parameters<InMemoryStore["listNamespaces"]>[0][] = [{}, { prefix: ["memories"] }, { suffix: ["work"] }, { maxDepth: 2 }, { prefix: ["memories", "*"] }];
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
    expect(await ours.search([])).toEqual([]);
  });
});
