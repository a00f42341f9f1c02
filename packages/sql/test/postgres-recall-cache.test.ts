import { HumanMessage } from "@langchain/core/messages";
import { type RecallHit, encodeSessionKey } from "@memoria/core";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { seedRecall } from "./fixtures/recall-seed.js";
import { type PgPoolLike, type PgQuery, createPostgresStore } from "../src/index.js";

const connectionString = inject("databaseUrl");
const real = new pg.Pool({ connectionString, max: 8 });
afterAll(() => real.end());

let prefixes = 0;
const freshPrefix = () => `memoria_held_${process.pid}_${prefixes++}_`;

/** The pool, noting each statement that ranks a scope in SQL (by words: `WITH stats`; by vector: a scan of the scope's embeddings). */
function countingPool() {
  const ranked: string[] = [];
  const note = (query: string | PgQuery) => {
    const text = typeof query === "string" ? query : query.text;
    if (text.includes("WITH stats")) ranked.push("rank terms");
    else if (/^SELECT session_id, position, at, embedding FROM/.test(text.trim())) ranked.push("rank vectors");
  };
  const pool: PgPoolLike = {
    query: (query, params) => {
      note(query);
      return real.query(query as string, params);
    },
    connect: async () => {
      const client = await real.connect();
      return {
        query: (query: string | PgQuery, params?: unknown[]) => {
          note(query);
          return client.query(query as string, params);
        },
        release: (error?: Error | boolean) => client.release(error),
      };
    },
    end: async () => {},
  };
  return { pool, ranked };
}

type Store = ReturnType<typeof createPostgresStore>;

const queries = [["harbour"], ["ferry"], ["tide", "lighthouse"], ["lighthouse", "tide", "ferry", "harbour"], ["nothing"]];
/** Hits with their scores to 6 digits: the process sums a cosine in 32-bit floats (SIMD) and PostgreSQL adds BM25 terms in its own order. */
const rounded = (hits: readonly RecallHit[]) => hits.map((hit) => ({ ...hit, score: hit.score.toFixed(6) }));
const sessions = (hits: readonly { session: string }[]) => hits.map((hit) => hit.session).sort();

describe("recall held in the process (PostgreSQL)", () => {
  it("ranks as the SQL does, by words and by vector, from the second query at a version on", async () => {
    const tablePrefix = freshPrefix();
    const { pool, ranked } = countingPool();
    const held = createPostgresStore({ pool, tablePrefix });
    const inSql = createPostgresStore({ connectionString, tablePrefix, recallCacheBytes: 0 });
    await seedRecall(held, "scope", 40);
    for (let round = 0; round < 3; round++) {
      ranked.length = 0;
      for (const query of queries) {
        for (const k of [1, 3, 12, 50]) {
          expect(rounded(await held.recallIndex().searchTerms!("scope", query, k))).toEqual(rounded(await inSql.recallIndex().searchTerms!("scope", query, k)));
        }
      }
      const vector = [1, 0.5, round / 3];
      expect(rounded(await held.recallIndex().search("scope", vector, 7))).toEqual(rounded(await inSql.recallIndex().search("scope", vector, 7)));
      // The first round's first query ranks in SQL and the second loads the scope; from then on, nothing is ranked in SQL.
      expect(ranked).toEqual(round === 0 ? ["rank terms"] : []);
    }
    await held.close();
    await inSql.close();
  });

  it("keeps a held scope current through this process's writes, and sees another process's writes and erasures", async () => {
    const tablePrefix = freshPrefix();
    const { pool, ranked } = countingPool();
    const store = createPostgresStore({ pool, tablePrefix });
    const other = createPostgresStore({ connectionString, tablePrefix, recallCacheBytes: 0 });
    await seedRecall(store, "scope", 6);
    const index = store.recallIndex();
    const lighthouse = async () => sessions(await index.searchTerms!("scope", ["lighthouse"], 10));
    for (let i = 0; i < 2; i++) await lighthouse(); // held
    ranked.length = 0;
    await seedRecall(store, "scope", 1, 6); // this process's own write: s6 (harbour, lighthouse)
    expect(await lighthouse()).toEqual(["s0", "s3", "s6"].map((sessionId) => encodeSessionKey({ sessionId })));
    expect(ranked).toEqual([]); // still held
    await seedRecall(other, "scope", 1, 15); // another process's: s15 (tide, lighthouse)
    expect(await lighthouse()).toEqual(["s0", "s15", "s3", "s6"].map((sessionId) => encodeSessionKey({ sessionId })));
    await lighthouse();
    await other.delete({ sessionId: "s3" }); // its recall row goes by the session's cascade
    expect(await lighthouse()).toEqual(["s0", "s15", "s6"].map((sessionId) => encodeSessionKey({ sessionId })));
    await lighthouse();
    // Emptied and filled again: a new version, never one the scope had before.
    await other.recallIndex().remove({ scope: "scope" });
    await seedRecall(other, "scope", 1, 12);
    expect(await lighthouse()).toEqual([encodeSessionKey({ sessionId: "s12" })]);
    await store.close();
    await other.close();
  });

  it("stays true while processes write one scope at once: each write's version row is locked from its first read to its commit", async () => {
    const tablePrefix = freshPrefix();
    const [a, b] = [createPostgresStore({ connectionString, tablePrefix }), createPostgresStore({ connectionString, tablePrefix })];
    const inSql = createPostgresStore({ connectionString, tablePrefix, recallCacheBytes: 0 });
    await seedRecall(a, "scope", 10);
    for (const store of [a, b]) for (let i = 0; i < 2; i++) await store.recallIndex().searchTerms!("scope", ["ferry"], 100); // both hold it
    // Rounds in which both write, or one writes and the other erases, at once; each keeps its copy current through its own writes only.
    const found = async (store: Store) => sessions(await store.recallIndex().searchTerms!("scope", ["ferry"], 200));
    for (let round = 0; round < 20; round++) {
      const n = 100 + 2 * round;
      await Promise.all(
        round % 5 === 4
          ? [seedRecall(a, "scope", 1, n), b.delete({ sessionId: `s${round % 10}` })]
          : [seedRecall(a, "scope", 1, n), seedRecall(b, "scope", 1, n + 1)],
      );
      const truth = await found(inSql);
      expect([await found(a), await found(b)], `round ${round}`).toEqual([truth, truth]);
    }
    for (const store of [a, b, inSql]) await store.close();
  });

  it("indexes and erases one session at once: no refused row, no deadlock, and nothing of it held after", async () => {
    const tablePrefix = freshPrefix();
    const [a, b] = [createPostgresStore({ connectionString, tablePrefix }), createPostgresStore({ connectionString, tablePrefix })];
    await seedRecall(a, "scope", 4);
    for (let i = 0; i < 2; i++) await a.recallIndex().searchTerms!("scope", ["ferry"], 100); // held
    for (let round = 0; round < 20; round++) {
      const key = { sessionId: `e${round}` };
      await a.append(key, [new HumanMessage("to be erased")]);
      const item = { scope: "scope", session: encodeSessionKey(key), position: 0, at: 1, vector: [1, 0, 0], terms: ["ferry"] };
      await Promise.all([a.recallIndex().upsert([item]), b.delete(key)]);
      expect(sessions(await a.recallIndex().searchTerms!("scope", ["ferry"], 100))).not.toContain(encodeSessionKey(key));
    }
    for (const store of [a, b]) await store.close();
  });

  it("keeps no trace of an erased scope: its version row goes with its last item", async () => {
    const tablePrefix = freshPrefix();
    const store = createPostgresStore({ connectionString, tablePrefix });
    await seedRecall(store, "memoriaScope=userId&userId=carol", 2);
    await seedRecall(store, "memoriaScope=userId&userId=dan", 1, 2);
    const scopes = async () => (await real.query(`SELECT scope_id FROM ${tablePrefix}recall_scopes ORDER BY scope_id`)).rows.map((row) => row.scope_id);
    expect(await scopes()).toEqual(["memoriaScope=userId&userId=carol", "memoriaScope=userId&userId=dan"]);
    await store.delete({ sessionId: "s0" });
    expect(await scopes()).toHaveLength(2);
    await store.delete({ sessionId: "s1" });
    expect(await scopes()).toEqual(["memoriaScope=userId&userId=dan"]);
    await store.close();
  });

  it("versions the scopes of a database made before them (schema 7), and refuses a budget that is not a byte count", async () => {
    const tablePrefix = freshPrefix();
    const store = createPostgresStore({ connectionString, tablePrefix, recallCacheBytes: 0 });
    await seedRecall(store, "old", 3);
    await store.close();
    // As schema 7 left it: no versions.
    await real.query(`DROP TRIGGER ${tablePrefix}recall_added ON ${tablePrefix}recall; DROP TRIGGER ${tablePrefix}recall_changed ON ${tablePrefix}recall;
      DROP TRIGGER ${tablePrefix}recall_removed ON ${tablePrefix}recall; DROP FUNCTION ${tablePrefix}recall_stamp();
      DROP TABLE ${tablePrefix}recall_scopes; DROP SEQUENCE ${tablePrefix}recall_clock; UPDATE ${tablePrefix}schema_version SET version = 7`);
    const upgraded = createPostgresStore({ connectionString, tablePrefix });
    for (let i = 0; i < 3; i++)
      expect(sessions(await upgraded.recallIndex().searchTerms!("old", ["ferry"], 10))).toEqual(
        ["s0", "s1", "s2"].map((sessionId) => encodeSessionKey({ sessionId })),
      );
    expect((await real.query(`SELECT count(*)::int AS n FROM ${tablePrefix}recall_scopes`)).rows).toEqual([{ n: 1 }]);
    await upgraded.close();
    expect(() => createPostgresStore({ connectionString, recallCacheBytes: -1 })).toThrow(/recallCacheBytes must be a whole number of bytes >= 0, got -1/);
  });
});
