import { HumanMessage } from "@langchain/core/messages";
import mysql from "mysql2/promise";
import { afterAll, describe, expect, inject, it } from "vitest";
import { MYSQL_MAX_ID_LENGTH, createMysqlStore } from "../src/index.js";

const uri = inject("mysqlUrl");
const store = createMysqlStore({ uri });
afterAll(() => store.close());

describe("mysql specifics", () => {
  it("refuses a key longer than its key columns hold as INVALID_ARGUMENT naming the limit, and writes nothing", async () => {
    // 256 CJK characters: valid in every store, 2,300 characters once percent-encoded.
    const key = { sessionId: `long-${"日".repeat(250)}` };
    const refused = await store.append(key, [new HumanMessage("kept nowhere")]).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining(String(MYSQL_MAX_ID_LENGTH)) });
    await expect(store.setState(key, "summary", "x")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await store.count(key)).toBe(0);
    expect((await store.list({ sessionId: key.sessionId })).sessions).toEqual([]);
  });

  it("keeps keys apart that differ only in case, accents or trailing spaces (exact collations)", async () => {
    const ids = ["Ada", "ada", "é", "e\u0301", "e", "pad", "pad "];
    const run = crypto.randomUUID();
    for (const id of ids) await store.append({ userId: run, sessionId: id }, [new HumanMessage(id)]);
    for (const id of ids) expect((await store.read({ userId: run, sessionId: id })).map((m) => m.content)).toEqual([id]);
    expect((await store.list({ userId: run })).sessions).toHaveLength(ids.length);
    // Filters and erasure compare field values exactly too: "pad" is not "pad ".
    for (const id of ids) expect((await store.list({ userId: run, sessionId: id })).sessions).toEqual([{ userId: run, sessionId: id }]);
    expect(await store.delete({ userId: run, sessionId: "pad" })).toBe(1);
    expect(await store.count({ userId: run, sessionId: "pad " })).toBe(1);
  });

  it("finds a recall term longer than MySQL keys by the same term (cut alike on both sides)", async () => {
    const key = { sessionId: `terms-${crypto.randomUUID()}` };
    await store.append(key, [new HumanMessage("x")]);
    const index = store.recallIndex();
    const long = `${"ü".repeat(199)}🎉${"z".repeat(100)}`;
    await index.upsert([{ session: `sessionId=${key.sessionId}`, position: 0, scope: key.sessionId, at: 1, vector: [1, 0], terms: [long, "short"] }]);
    expect(await index.searchTerms?.(key.sessionId, [long], 5)).toMatchObject([{ position: 0 }]);
  });

  it("refuses a pool that counts matched rows (no -FOUND_ROWS), which its upserts cannot read", async () => {
    const pool = mysql.createPool({ uri });
    try {
      expect(() => createMysqlStore({ pool })).toThrow(/FOUND_ROWS/);
    } finally {
      await pool.end();
    }
  });

  it("migrates once when many stores start at once on an empty database", async () => {
    const tablePrefix = `m${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}_`;
    const stores = Array.from({ length: 6 }, () => createMysqlStore({ uri, tablePrefix }));
    try {
      await Promise.all(stores.map((s) => s.ready()));
      await stores[0]?.append({ sessionId: "after" }, [new HumanMessage("ok")]);
      expect(await stores[5]?.count({ sessionId: "after" })).toBe(1);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});
