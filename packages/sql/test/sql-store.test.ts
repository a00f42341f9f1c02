import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemoriaError, encodeSessionKey } from "@memoria/core";
import { freePort } from "@memoria/testkit/servers";
import { numbered } from "@memoria/testkit";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SCHEMA_VERSION, createPostgresStore, createSqliteStore } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-sql-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const key = () => ({ sessionId: crypto.randomUUID() });

describe("sqlite specifics", () => {
  it("names its database for recall's progress: one id per database, kept on reopening and by a copy of the file", async () => {
    const path = join(dir, "home.db");
    const [store, other] = [createSqliteStore({ path }), createSqliteStore({ path: join(dir, "home-other.db") })];
    const home = await store.recallIndex().home!();
    expect(home).toMatch(/^sql:[0-9a-f-]{36}$/);
    expect(await other.recallIndex().home!()).not.toBe(home);
    await Promise.all([store.close(), other.close()]);
    copyFileSync(path, join(dir, "home-copy.db"));
    const [reopened, copy] = [createSqliteStore({ path }), createSqliteStore({ path: join(dir, "home-copy.db") })];
    expect(await reopened.recallIndex().home!()).toBe(home);
    expect(await copy.recallIndex().home!()).toBe(home);
    await Promise.all([reopened.close(), copy.close()]);
  });

  it("gives a session's key with its fields in the order they were written, in list, recent and info", async () => {
    const store = createSqliteStore({ path: ":memory:" });
    const key = { userId: "bob", conversationId: "intro" };
    await store.append(key, numbered(2));
    const order = (found: object | undefined) => Object.keys(found ?? {}).join(",");
    expect((await store.list({ userId: "bob" })).sessions.map(order)).toEqual(["userId,conversationId"]);
    expect((await store.list()).sessions.map(order)).toEqual(["userId,conversationId"]);
    expect((await store.recent({ userId: "bob" })).sessions.map((info) => order(info.key))).toEqual(["userId,conversationId"]);
    expect(order((await store.info({ conversationId: "intro", userId: "bob" }))?.key)).toBe("userId,conversationId");
    await store.close();
  });

  it("reads a window as a range of the primary key, never scanning the session or sorting", async () => {
    const statements: string[] = [];
    const database = new Database(join(dir, "plan.db"), { verbose: (sql) => statements.push(String(sql)) });
    const store = createSqliteStore({ database });
    const k = key();
    await store.append(k, [new HumanMessage("a"), new HumanMessage("b"), new HumanMessage("c")]);
    statements.length = 0;
    expect((await store.read(k, { last: 2 })).map((m) => m.content)).toEqual(["b", "c"]);
    const windowed = statements.find((sql) => sql.includes("OFFSET"));
    expect(windowed).toBeDefined();
    const plan = database.prepare(`EXPLAIN QUERY PLAN ${windowed}`).all() as { detail: string }[];
    const details = plan.map((row) => row.detail).join("\n");
    // The n-th newest sequence number from the key's index alone, then the range from it, in order.
    expect(details).toMatch(/SEARCH memoria_messages USING COVERING INDEX sqlite_autoindex_memoria_messages_1 \(session_id=\?\)/);
    expect(details).toMatch(/SEARCH m USING INDEX sqlite_autoindex_memoria_messages_1 \(session_id=\? AND seq>\?\)/);
    expect(details).not.toMatch(/SCAN (m|memoria_messages)\b|TEMP B-TREE/);
    await store.close();
    database.close();
  });

  it("uses WAL mode, foreign keys and the default location ./.memoria/history.db", async () => {
    const cwd = process.cwd();
    const work = mkdtempSync(join(dir, "cwd-"));
    process.chdir(work);
    try {
      const store = createSqliteStore();
      await store.append(key(), [new HumanMessage("x")]);
      await store.close();
      const db = new Database(join(work, ".memoria", "history.db"));
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      db.close();
    } finally {
      process.chdir(cwd);
    }
  });

  it("prune() deletes expired sessions with their messages, in batches", async () => {
    const database = new Database(join(dir, "prune.db"));
    const store = createSqliteStore({ database, ttlSeconds: 1 });
    for (let i = 0; i < 5; i++) await store.append(key(), [new HumanMessage("old")]);
    await sleep(1_200);
    const fresh = key();
    await store.append(fresh, [new HumanMessage("new")]);
    expect(await store.prune({ batchSize: 2 })).toBe(5);
    const rows = database.prepare("SELECT COUNT(*) AS n FROM memoria_messages").get() as { n: number };
    expect(rows.n).toBe(1);
    expect(await store.count(fresh)).toBe(1);
    await store.close();
    database.close();
  });

  it("refuses a database whose schema is newer than this code", async () => {
    const path = join(dir, "future.db");
    const first = createSqliteStore({ path });
    await first.ready();
    await first.close();
    const db = new Database(path);
    db.prepare("UPDATE memoria_schema_version SET version = ?").run(SCHEMA_VERSION + 1);
    db.close();
    const store = createSqliteStore({ path });
    await expect(store.read(key())).rejects.toMatchObject({ code: "CORRUPT_DATA" });
    await store.close();
  });

  it("refuses a read after close, though reads of a migrated store skip waiting on ready()", async () => {
    const store = createSqliteStore({ path: join(dir, "closed.db") });
    const k = key();
    await store.append(k, [new HumanMessage("before")]);
    expect(await store.read(k)).toHaveLength(1); // migrated: the fast path
    await store.close();
    await expect(store.read(k)).rejects.toMatchObject({ code: "STORE_CLOSED" });
    await expect(store.read(k, { last: 1 })).rejects.toMatchObject({ code: "STORE_CLOSED" });
  });

  it("keeps stores with different table prefixes apart in one file", async () => {
    const path = join(dir, "prefixes.db");
    const a = createSqliteStore({ path, tablePrefix: "app_a_" });
    const b = createSqliteStore({ path, tablePrefix: "app_b_" });
    const k = key();
    await a.append(k, [new HumanMessage("in a")]);
    expect(await b.count(k)).toBe(0);
    await Promise.all([a.close(), b.close()]);
    expect(() => createSqliteStore({ tablePrefix: "bad-prefix; DROP" })).toThrow(MemoriaError);
  });
});

describe("postgres specifics", () => {
  const connectionString = inject("databaseUrl");

  it("creates the schema once when many processes start on an empty database at once", async () => {
    const tablePrefix = `cold_${crypto.randomUUID().slice(0, 8)}_`;
    const stores = Array.from({ length: 8 }, () => createPostgresStore({ connectionString, tablePrefix, maxConnections: 2 }));
    await Promise.all(stores.map((store) => store.ready()));
    await Promise.all(stores.map((store, i) => store.append({ sessionId: "cold" }, [new HumanMessage(`m${i}`)])));
    expect(await stores[0]!.count({ sessionId: "cold" })).toBe(8);
    const client = new pg.Client({ connectionString });
    await client.connect();
    const { rows } = await client.query(`SELECT version FROM ${tablePrefix}schema_version`);
    expect(rows).toEqual([{ version: SCHEMA_VERSION }]);
    await client.end();
    await Promise.all(stores.map((store) => store.close()));
  });

  it("a lock given back after its store closed does not open a new pool (whose idle connections would keep the process alive)", async () => {
    const application = `late_release_${crypto.randomUUID().slice(0, 8)}`;
    const store = createPostgresStore({ connectionString: `${connectionString}${connectionString.includes("?") ? "&" : "?"}application_name=${application}` });
    const lock = await store.lock!({ sessionId: "late" }, { ttlMs: 2_000 });
    await store.close();
    await lock.release();
    const client = new pg.Client({ connectionString });
    await client.connect();
    // The closed pool's backends leave pg_stat_activity a moment after their sockets close
    // (later on a busy machine); a pool opened by the release would keep its idle
    // connection for pg's idle timeout, 10 s, far past this wait.
    let open = -1;
    for (let waited = 0; waited < 3_000 && open !== 0; waited += 50) {
      if (open > 0) await sleep(50);
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [application]);
      open = rows[0]?.n ?? -1;
    }
    await client.end();
    expect(open).toBe(0);
  });

  it('a turn\'s last save sent again after it was applied and released its lock says "stored already", not "lock lost"', async () => {
    const store = createPostgresStore({ connectionString });
    const key = { sessionId: crypto.randomUUID() };
    const turn = await store.openTurn(key);
    expect(await turn.save(numbered(2), { turnId: "t1", last: true })).toEqual({ appended: true });
    // Given back in the same statement: another turn takes the lock at once.
    await (await store.lock(key, { waitMs: 0 })).release();
    // What a resend after a lost answer looks like: the same turn, the same (now released) lock.
    expect((await turn.save(numbered(2), { turnId: "t1", last: true })).appended).toBe(false);
    // A new turn under the released lock is still refused, writing nothing.
    await expect(turn.save(numbered(1), { turnId: "t2" })).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(await store.count(key)).toBe(2);
    await store.close();
  });

  it("keeps lock rows in an unlogged table, converting one an older version created logged", async () => {
    const tablePrefix = `locks_${crypto.randomUUID().slice(0, 8)}_`;
    const client = new pg.Client({ connectionString });
    await client.connect();
    await client.query(`CREATE TABLE ${tablePrefix}locks (session_id TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at BIGINT NOT NULL)`);
    await client.query(`INSERT INTO ${tablePrefix}locks VALUES ('held', 'someone', 0)`);
    const store = createPostgresStore({ connectionString, tablePrefix });
    await store.ready();
    const { rows } = await client.query("SELECT relpersistence FROM pg_class WHERE oid = to_regclass($1)", [`${tablePrefix}locks`]);
    expect(rows).toEqual([{ relpersistence: "u" }]);
    expect((await client.query(`SELECT owner FROM ${tablePrefix}locks`)).rows).toEqual([{ owner: "someone" }]);
    const k = key();
    const lock = await (store.lock as NonNullable<typeof store.lock>)(k);
    await store.append(k, [new HumanMessage("under the lock")], { lock });
    await lock.release();
    expect(await store.count(k)).toBe(1);
    await client.end();
    await store.close();
  });

  it("stores a \\u0000 inside content (jsonb could not)", async () => {
    const store = createPostgresStore({ connectionString });
    const k = key();
    await store.append(k, [new HumanMessage("nul \u0000 inside")]);
    expect((await store.read(k))[0]!.content).toBe("nul \u0000 inside");
    await store.close();
  });

  it("works with a pool the application owns, and leaves it open", async () => {
    const pool = new pg.Pool({ connectionString, max: 2 });
    const store = createPostgresStore({ pool });
    const k = key();
    await store.append(k, [new HumanMessage("pooled")]);
    await store.close();
    const { rows } = await pool.query("SELECT 1 AS ok");
    expect(rows).toEqual([{ ok: 1 }]);
    await pool.end();
  });

  it("fails fast with STORE_UNAVAILABLE when the server is down", async () => {
    const port = await freePort();
    const store = createPostgresStore({ connectionString: `postgres://memoria@127.0.0.1:${port}/postgres` });
    const error = await store.read(key()).catch((e: unknown) => e);
    expect(MemoriaError.hasCode(error, "STORE_UNAVAILABLE")).toBe(true);
    expect((error as Error).message).toContain("ECONNREFUSED");
    // A refused connection wrote nothing: a save failing this way says so.
    const saved = await store.append(key(), [new HumanMessage("x")]).catch((e: unknown) => e);
    expect(saved).toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored" });
    await store.close();
  });
});

describe("sqlite turn locks", () => {
  it("live in an unsynced file beside the history, shared by processes and stores on one connection", async () => {
    const path = join(dir, "locks.db");
    const database = new Database(path);
    const first = createSqliteStore({ database });
    const second = createSqliteStore({ database, tablePrefix: "other_" });
    const lock = await first.lock!({ sessionId: "s" });
    const elsewhere = createSqliteStore({ path }); // another connection, as another process would have
    await expect(elsewhere.lock!({ sessionId: "s" }, { waitMs: 0 })).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
    await elsewhere.close();
    await second.ready();
    const files = (database.pragma("database_list") as { name: string; file: string }[]).map((d) => [d.name, d.file.replace(dir, "")]);
    expect(files).toEqual([
      ["main", "/locks.db"],
      ["memoria_lockdb", "/locks.db-locks"],
    ]);
    expect(database.pragma("memoria_lockdb.synchronous", { simple: true })).toBe(0);
    await lock.release();
    await Promise.all([first.close(), second.close()]);
    database.close();
  });
});

describe("migrations", () => {
  it("brings a version-1 database (before derived state, conversation info and recall) up to date, keeping its messages", async () => {
    const path = join(dir, "v1.db");
    const first = createSqliteStore({ path });
    await first.append({ sessionId: "old" }, [new HumanMessage("from version 1")]);
    await first.close();
    const db = new Database(path);
    db.exec(`DROP TABLE memoria_recall_scopes; DROP TABLE memoria_recall_clock;
      DROP TABLE memoria_recall_terms; DROP TABLE memoria_recall; DROP TABLE memoria_state; DROP INDEX memoria_sessions_recent;
      ALTER TABLE memoria_sessions DROP COLUMN created_at; ALTER TABLE memoria_sessions DROP COLUMN active_at;
      ALTER TABLE memoria_sessions DROP COLUMN title; ALTER TABLE memoria_sessions DROP COLUMN metadata;
      ALTER TABLE memoria_schema_version DROP COLUMN home; UPDATE memoria_schema_version SET version = 1;`);
    const { updated_at: updatedAt } = db.prepare("SELECT updated_at FROM memoria_sessions").get() as { updated_at: number };
    db.close();
    const store = createSqliteStore({ path });
    // Version 3's activity times start from the last write version 1 recorded.
    expect(await store.info!({ sessionId: "old" })).toMatchObject({ createdAt: updatedAt, lastActiveAt: updatedAt, messageCount: 1 });
    expect((await store.recent!()).sessions.map((s) => s.key)).toEqual([{ sessionId: "old" }]);
    await store.setState({ sessionId: "old" }, "summary", "migrated");
    expect(await store.getState({ sessionId: "old" }, "summary")).toBe("migrated");
    expect((await store.read({ sessionId: "old" }))[0]!.content).toBe("from version 1");
    await store.close();
    const check = new Database(path);
    expect(check.prepare("SELECT version, home IS NOT NULL AS named FROM memoria_schema_version").all()).toEqual([{ version: SCHEMA_VERSION, named: 1 }]);
    check.close();
  });

  it("keeps a version-4 database's recall vectors: found by vector, by words once indexed again", async () => {
    const path = join(dir, "v4.db");
    const session = encodeSessionKey({ sessionId: "old" });
    const item = { scope: "scope", session, position: 0, at: 1, vector: [1, 0, 0] };
    const first = createSqliteStore({ path });
    await first.append({ sessionId: "old" }, [new HumanMessage("harbour ferry")]);
    await first.close();
    const db = new Database(path);
    db.exec(`DROP TRIGGER memoria_recall_added; DROP TRIGGER memoria_recall_changed; DROP TRIGGER memoria_recall_removed;
      DROP TABLE memoria_recall_scopes; DROP TABLE memoria_recall_clock;
      DROP TABLE memoria_recall_terms; DROP INDEX memoria_recall_lexical; ALTER TABLE memoria_recall DROP COLUMN terms;
      ALTER TABLE memoria_schema_version DROP COLUMN home; UPDATE memoria_schema_version SET version = 4;`);
    db.prepare("INSERT INTO memoria_recall (session_id, position, scope_id, at, embedding) VALUES (?, 0, 'scope', 1, ?)").run(
      session,
      Buffer.from(new Float32Array([1, 0, 0]).buffer),
    );
    db.close();
    const store = createSqliteStore({ path });
    const index = store.recallIndex();
    expect(await index.search("scope", [1, 0, 0], 5)).toEqual([{ session, position: 0, at: 1, score: expect.closeTo(1, 5) }]);
    expect(await index.searchTerms!("scope", ["harbour"], 5)).toEqual([]);
    await index.upsert([{ ...item, terms: ["harbour", "ferry"] }]);
    expect(await index.searchTerms!("scope", ["harbour"], 5)).toEqual([{ session, position: 0, at: 1, score: expect.any(Number) }]);
    await store.close();
  });
});

describe("reading LangChain's data", () => {
  it("imports what LangChain's PostgresChatMessageHistory wrote, every field intact", async () => {
    const { PostgresChatMessageHistory } = await import("@langchain/community/stores/message/postgres");
    const { decodeMessage } = await import("@memoria/core");
    const { everyKindOfMessage, fieldsOf } = await import("@memoria/testkit");
    const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
    const sessionId = `lc-${crypto.randomUUID()}`;
    const langchain = new PostgresChatMessageHistory({ sessionId, pool, tableName: "langchain_import_test" });
    const original = everyKindOfMessage().filter((m) => m.getType() !== "function");
    await langchain.addMessages(original);
    const { rows } = await pool.query("SELECT message FROM langchain_import_test WHERE session_id = $1 ORDER BY id", [sessionId]);
    const store = createPostgresStore({ pool });
    await store.append(
      { sessionId },
      rows.map((row) => decodeMessage(row.message)),
      { turnId: `import-${sessionId}` },
    );
    const imported = await store.read({ sessionId });
    expect(imported.map(fieldsOf)).toEqual(original.map(fieldsOf));
    await store.close();
    await pool.end();
  });
});
