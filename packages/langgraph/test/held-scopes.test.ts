import { HashingEmbeddings } from "@memoria/memory/long-term";
import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoriaStore } from "../src/index.js";

const byUser = { fields: ["userId"], of: (namespace: readonly string[]) => ({ userId: namespace[1] }) };
const index = { embeddings: new HashingEmbeddings(), fields: ["text"] };
const ada = ["memories", "ada"];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const sealing = { keys: { k1: randomBytes(32) }, activeKeyId: "k1" };

/**
 * Two handles on one database, as two processes would open it (each through its own
 * `encryptStore`, with the same key, for "sqlite, encrypted": the version is then a
 * sealed state value too), or one in-memory store shared by two MemoriaStores.
 */
function twoHandles(kind: "sqlite" | "sqlite, encrypted" | "memory"): [HistoryStore, HistoryStore] {
  if (kind === "memory") {
    const store = createInMemoryStore();
    cleanups.push(() => store.close());
    return [store, store];
  }
  const dir = mkdtempSync(join(tmpdir(), "memoria-held-scopes-"));
  const handles = [createSqliteStore({ path: join(dir, "history.db") }), createSqliteStore({ path: join(dir, "history.db") })] as [HistoryStore, HistoryStore];
  cleanups.push(async () => {
    for (const handle of handles) await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return kind === "sqlite" ? handles : [encryptStore(handles[0], sealing), encryptStore(handles[1], sealing)];
}

const keys = (items: { key: string }[]) => items.map((item) => item.key).sort();

describe.each(["sqlite", "sqlite, encrypted", "memory"] as const)("MemoriaStore's held scopes on %s", (kind) => {
  it("searches a held scope again without reading its items, and sees every write another handle made since", async () => {
    const [one, two] = twoHandles(kind);
    const reader = new MemoriaStore({ store: one, scope: byUser, index });
    const writer = new MemoriaStore({ store: two, scope: byUser, index });
    await writer.put(ada, "tea", { text: "Ada drinks green tea" });
    await writer.put(ada, "city", { text: "Ada lives in Paris" });
    expect(keys(await reader.search(ada))).toEqual(["city", "tea"]);
    const readAll = vi.spyOn(one, "getAllState");
    expect((await reader.search(ada, { query: "tea" }))[0]?.key).toBe("tea");
    expect(readAll).not.toHaveBeenCalled();

    await writer.put(ada, "pet", { text: "Ada has a cat named Turing" });
    expect((await reader.search(ada, { query: "cat Turing" }))[0]?.key).toBe("pet");
    await writer.put(ada, "tea", { text: "Ada gave up tea for coffee" });
    expect((await reader.search(ada, { query: "coffee" }))[0]).toMatchObject({ key: "tea", value: { text: "Ada gave up tea for coffee" } });
    await writer.delete(ada, "city");
    expect(keys(await reader.search(ada))).toEqual(["pet", "tea"]);
    expect(readAll).toHaveBeenCalledTimes(3);

    // Erasing the user removes the scope's version with its items: nothing held is shown.
    await two.delete({ userId: "ada" });
    expect(await reader.search(ada)).toEqual([]);
    expect(await reader.listNamespaces()).toEqual([]);
  });

  it("hands out copies: changing an item a search returned changes nothing held", async () => {
    const [store] = twoHandles(kind);
    const ours = new MemoriaStore({ store, scope: byUser, index });
    await ours.put(ada, "tea", { text: "Ada drinks green tea", tags: ["drink"] });
    const [found] = await ours.search(ada);
    const value = found?.value as { text: string; tags: string[] };
    value.tags.push("changed");
    value.text = "changed";
    expect((await ours.search(ada, { query: "tea" }))[0]?.value).toEqual({ text: "Ada drinks green tea", tags: ["drink"] });
  });
});
