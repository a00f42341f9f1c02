import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RecallItem, encodeSessionKey } from "@memoria/core";
import { filesHolding } from "@memoria/testkit/servers";
import { watchStatements } from "@memoria/testkit/sqlite-statements";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { seedRecall } from "./fixtures/recall-seed.js";
import { createSqliteStore, defaultRecallCacheBytes } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-recall-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const fresh = () => join(dir, `recall-${files++}.db`);

/** A database connection whose statements are noted (by their first word, the ranking ones by name). */
function countingDatabase(path: string) {
  const seen: string[] = [];
  const db = watchStatements(new Database(path), (sql) =>
    seen.push(sql.includes("WITH stats") ? "rank terms" : sql.includes("vec_distance_cosine") ? "rank vectors" : (sql.trim().split(/\s+/)[0] ?? "")),
  );
  return { db, seen };
}

const queries = [
  ["harbour"],
  ["ferry"],
  ["tide", "lighthouse"],
  ["lighthouse", "tide", "ferry", "harbour"],
  ["ferry", "harbour", "lighthouse"],
  [{ term: "harbor", alternatives: [{ term: "harbour", weight: 0.5 }] }],
  ["nothing"],
];

describe("recall held in the process (SQLite)", () => {
  it("ranks as the SQL does, ties and items without terms included", async () => {
    const path = fresh();
    const held = createSqliteStore({ path });
    const ranked = createSqliteStore({ path, recallCacheBytes: 0 });
    await seedRecall(held, "scope", 40);
    for (let round = 0; round < 3; round++) {
      for (const query of queries) {
        for (const k of [1, 3, 12, 50]) {
          expect(await held.recallIndex().searchTerms!("scope", query, k)).toEqual(await ranked.recallIndex().searchTerms!("scope", query, k));
        }
      }
      // Items i and i + 21 have one vector: equal scores, ordered as the SQL orders them.
      for (const k of [3, 10, 40]) {
        const nearest = await held.recallIndex().search("scope", [1, 0.5, 0.2], k);
        const inSql = await ranked.recallIndex().search("scope", [1, 0.5, 0.2], k);
        expect(nearest.map((hit) => `${hit.session}#${hit.position}`)).toEqual(inSql.map((hit) => `${hit.session}#${hit.position}`));
        expect(nearest.map((hit) => hit.score)).toEqual(inSql.map((hit) => expect.closeTo(hit.score, 5)));
      }
    }
    await held.close();
    await ranked.close();
  });

  it("ranks a scope in memory from the second query at the same version, and keeps it current through its own writes", async () => {
    const path = fresh();
    const { db, seen } = countingDatabase(path);
    const store = createSqliteStore({ database: db });
    await seedRecall(store, "scope", 10);
    const index = store.recallIndex();
    seen.length = 0;
    const inSql = await index.searchTerms!("scope", ["harbour"], 3);
    expect(seen).toEqual(["SELECT", "rank terms"]); // the version, then the SQL's ranking
    seen.length = 0;
    await index.searchTerms!("scope", ["harbour"], 3);
    expect(seen).not.toContain("rank terms"); // loaded
    seen.length = 0;
    expect(await index.searchTerms!("scope", ["harbour"], 3)).toEqual(inSql);
    expect(seen).toEqual(["SELECT"]); // held: the version only
    // This process's write: held still, and it finds the new item.
    const [added] = await seedRecall(store, "scope", 1, 10);
    await index.upsert([{ ...(added as RecallItem), terms: ["harbour", "harbour", "harbour"] }]);
    seen.length = 0;
    const found = await index.searchTerms!("scope", ["harbour"], 3);
    expect(seen).toEqual(["SELECT"]);
    expect(found[0]?.session).toBe(encodeSessionKey({ sessionId: "s10" }));
    // A write to a scope not held reads no version.
    seen.length = 0;
    await index.upsert([{ ...(added as RecallItem), scope: "elsewhere", position: 1 }]);
    expect(seen).not.toContain("SELECT");
    // An item of a session that is not there (erased) is not indexed, nor held.
    const gone = encodeSessionKey({ sessionId: "gone" });
    await index.upsert([{ scope: "scope", session: gone, position: 0, at: 2000, vector: [1, 0, 0], terms: ["harbour", "harbour", "harbour", "harbour"] }]);
    expect((await index.searchTerms!("scope", ["harbour"], 20)).map((hit) => hit.session)).not.toContain(gone);
    await store.close();
    db.close();
  });

  it("holds a scope each query of which is followed by this process's own write (a chat's turns), not one another connection writes", async () => {
    const path = fresh();
    const { db, seen } = countingDatabase(path);
    const store = createSqliteStore({ database: db });
    const other = createSqliteStore({ path, recallCacheBytes: 0 });
    await seedRecall(store, "scope", 4);
    await seedRecall(store, "busy", 4, 4);
    const index = store.recallIndex();
    const turn = async (scope: string, writer: typeof store, i: number) => {
      seen.length = 0;
      const found = await index.searchTerms!(scope, ["ferry"], 10);
      const ranked = [...seen];
      await seedRecall(writer, scope, 1, 100 + i); // the turn's messages indexed after it
      return { ranked, found: found.length };
    };
    expect((await turn("scope", store, 0)).ranked).toEqual(["SELECT", "rank terms"]);
    const second = await turn("scope", store, 1);
    expect(second.ranked).not.toContain("rank terms"); // loaded: the version moved by this process's write only
    expect(second.found).toBe(5);
    expect(await turn("scope", store, 2)).toEqual({ ranked: ["SELECT"], found: 6 }); // held, and current
    // A scope another connection writes after every query is ranked by the SQL, never loaded.
    for (let i = 0; i < 3; i++) expect((await turn("busy", other, 10 + i)).ranked).toEqual(["SELECT", "rank terms"]);
    await store.close();
    await other.close();
    db.close();
  });

  it("sees another connection's writes and erasures at the next query", async () => {
    const path = fresh();
    const store = createSqliteStore({ path });
    const other = createSqliteStore({ path, recallCacheBytes: 0 });
    await seedRecall(store, "scope", 6);
    const index = store.recallIndex();
    for (let i = 0; i < 3; i++) await index.searchTerms!("scope", ["lighthouse"], 10); // held
    await seedRecall(other, "scope", 1, 6); // s6: harbour, lighthouse
    const sessions = async () => (await index.searchTerms!("scope", ["lighthouse"], 10)).map((hit) => hit.session).sort();
    expect(await sessions()).toEqual(["s0", "s3", "s6"].map((sessionId) => encodeSessionKey({ sessionId })));
    await sessions(); // held again
    await other.delete({ sessionId: "s3" }); // its recall row goes by the session's cascade
    expect(await sessions()).toEqual(["s0", "s6"].map((sessionId) => encodeSessionKey({ sessionId })));
    // Emptied and filled again: a new version, never one the scope had before.
    await sessions();
    await other.recallIndex().remove({ scope: "scope" });
    await seedRecall(other, "scope", 1, 12); // s12: harbour, lighthouse
    expect(await sessions()).toEqual([encodeSessionKey({ sessionId: "s12" })]);
    await store.close();
    await other.close();
  });

  it("lets go of what an erasure through the store removed: remove's scope, every scope on delete; keeps them when nothing went", async () => {
    const { db, seen } = countingDatabase(fresh());
    const store = createSqliteStore({ database: db });
    const index = store.recallIndex();
    await seedRecall(store, "a", 3);
    await seedRecall(store, "b", 3, 3);
    await seedRecall(store, "c", 3, 6);
    const asked = async (scope: string) => {
      seen.length = 0;
      await index.searchTerms!(scope, ["ferry"], 3);
      return [...seen];
    };
    for (const scope of ["a", "b", "c"]) for (let i = 0; i < 2; i++) await asked(scope); // held from the second
    expect(await asked("b")).toEqual(["SELECT"]);
    // Recall's retention pass removing nothing lets nothing go.
    expect(await index.remove({ scope: "a", before: 0 })).toBe(0);
    expect(await asked("a")).toEqual(["SELECT"]);
    // Removing a's items lets a go, and only a.
    expect(await index.remove({ scope: "a", before: Number.MAX_SAFE_INTEGER })).toBe(3);
    expect(await asked("b")).toEqual(["SELECT"]);
    expect(await index.searchTerms!("a", ["ferry"], 3)).toEqual([]);
    // A session erased through the store: every held scope goes, so c is ranked in SQL, then loaded again.
    await store.delete({ sessionId: "s3" });
    expect(await asked("c")).toContain("rank terms");
    await store.close();
    db.close();
  });

  it("keeps no trace of an erased scope: its version row goes with its last item, and no file holds its id", async () => {
    const folder = mkdtempSync(join(dir, "erased-"));
    const path = join(folder, "history.db");
    const store = createSqliteStore({ path });
    await seedRecall(store, "memoriaScope=userId&userId=carol", 2);
    await seedRecall(store, "memoriaScope=userId&userId=dan", 1, 2);
    const db = new Database(path);
    const scopes = () => db.prepare("SELECT scope_id FROM memoria_recall_scopes ORDER BY scope_id").pluck().all();
    expect(scopes()).toEqual(["memoriaScope=userId&userId=carol", "memoriaScope=userId&userId=dan"]);
    await store.delete({ sessionId: "s0" });
    expect(scopes()).toHaveLength(2);
    await store.delete({ sessionId: "s1" });
    expect(scopes()).toEqual(["memoriaScope=userId&userId=dan"]);
    db.close();
    await store.close();
    // The scope id was in the recall rows, their terms and the version row: all zeroed (secure_delete), the log checkpointed.
    expect(filesHolding(folder, "userId=carol")).toEqual([]);
    expect(filesHolding(folder, "userId=dan")).not.toEqual([]);
  });

  it("ranks in SQL a scope larger than its budget, and refuses a budget that is not a byte count", async () => {
    const { db, seen } = countingDatabase(fresh());
    const store = createSqliteStore({ database: db, recallCacheBytes: 2000 });
    await seedRecall(store, "scope", 20);
    for (let i = 0; i < 3; i++) await store.recallIndex().searchTerms!("scope", ["ferry"], 3);
    seen.length = 0;
    await store.recallIndex().searchTerms!("scope", ["ferry"], 3);
    expect(seen).toEqual(["SELECT", "rank terms"]);
    await store.close();
    db.close();
    // Unset: a sixteenth of the memory the process may use, between 32 and 512 MiB.
    expect(defaultRecallCacheBytes()).toBeGreaterThanOrEqual(32 * 1024 * 1024);
    expect(defaultRecallCacheBytes()).toBeLessThanOrEqual(512 * 1024 * 1024);
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createSqliteStore({ path: ":memory:", recallCacheBytes: bad })).toThrow(/recallCacheBytes must be a whole number of bytes >= 0/);
    }
  });
});
