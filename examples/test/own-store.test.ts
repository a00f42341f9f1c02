import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runHistoryStoreSuite } from "@memoria/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../src/own-store/chat.js";
import { createSqliteEngineStore } from "../src/own-store/sqlite-engine-store.js";

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
