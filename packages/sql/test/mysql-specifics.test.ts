import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import { transcript } from "@memoria/testkit";
import { freePort } from "@memoria/testkit/servers";
import mysql from "mysql2/promise";
import { afterAll, describe, expect, inject, it } from "vitest";
import { MYSQL_MAX_ID_LENGTH, type MysqlConnectionLike, type MysqlPoolLike, createMysqlStore } from "../src/index.js";

const uri = inject("mysqlUrl");
const store = createMysqlStore({ uri });
afterAll(() => store.close());

/**
 * A real pool whose connections note each statement's first three words in `sent`;
 * `fail` may answer a statement with an error instead of sending it.
 */
function watchedPool(sent: string[], fail: (sql: string) => Error | undefined = () => undefined, multipleStatements = false): MysqlPoolLike {
  const real = mysql.createPool({ uri, connectionLimit: 4, flags: ["-FOUND_ROWS"], multipleStatements });
  const watchedPool: MysqlPoolLike = {
    async getConnection(): Promise<MysqlConnectionLike> {
      const pooled = await real.getConnection();
      const watched: MysqlConnectionLike = {
        query: (sql, values) => {
          sent.push(sql.trim().split(/\s+/).slice(0, 3).join(" "));
          const error = fail(sql);
          return error ? Promise.reject(error) : (pooled.query(sql, values) as Promise<[unknown, unknown]>);
        },
        release: () => pooled.release(),
        destroy: () => pooled.destroy(),
      };
      // The driver's own connection, by which the store knows one it has set up already.
      return Object.assign(watched, { connection: pooled.connection });
    },
    end: () => real.end(),
  };
  // The driver's pool, by whose settings the store knows whether it may send scripts.
  return Object.assign(watchedPool, { pool: real.pool });
}

const deadlock = () =>
  Object.assign(new Error("Deadlock found when trying to get lock; try restarting transaction"), { code: "ER_LOCK_DEADLOCK", errno: 1213, sqlState: "40001" });

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

  it("a turn costs the same statements at 10 and at 2,000 stored messages: lock, windowed read, and one transaction that appends and releases", async () => {
    const sent: string[] = [];
    const watched = createMysqlStore({ pool: watchedPool(sent) });
    const model = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`));
    const chain = new RunnableWithMessageHistory({ runnable: model, store: watched, memory: { name: "last-20", load: ({ read }) => read({ last: 20 }) } });
    try {
      await chain.invoke("warm up: creates the schema", { configurable: { sessionId: `warm-${crypto.randomUUID()}` } });
      const costs: string[][] = [];
      for (const size of [10, 2_000]) {
        const sessionId = `cost-${size}-${crypto.randomUUID()}`;
        await watched.append(
          { sessionId },
          Array.from({ length: size }, (_, i) => new HumanMessage(`m${i}`)),
        );
        sent.length = 0;
        await chain.invoke("q", { configurable: { sessionId } });
        costs.push([...sent]);
      }
      // No RETURNING or conditional upsert: the session's upsert is followed by a read of its row.
      expect(costs[0]).toEqual([
        "INSERT INTO memoria_locks",
        "SELECT payload AS",
        "START TRANSACTION",
        "SELECT owner FROM",
        "INSERT INTO memoria_sessions",
        "SELECT next_seq, (expires_at",
        "INSERT INTO memoria_turns",
        "INSERT INTO memoria_messages",
        "UPDATE memoria_locks SET",
        "COMMIT",
      ]);
      expect(costs[1]).toEqual(costs[0]);
    } finally {
      await watched.close();
    }
  });

  it("on connections that take scripts, a turn is two round trips: the lock with its read, and one script that appends and releases", async () => {
    const sent: string[] = [];
    const watched = createMysqlStore({ pool: watchedPool(sent, undefined, true) });
    const model = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`));
    const chain = new RunnableWithMessageHistory({
      runnable: model,
      store: watched,
      memory: { name: "last-20", firstRead: { last: 20 }, load: ({ read }) => read({ last: 20 }) },
    });
    try {
      await chain.invoke("warm up: creates the schema", { configurable: { sessionId: `warm-${crypto.randomUUID()}` } });
      for (const size of [10, 2_000]) {
        const sessionId = `trip-${size}-${crypto.randomUUID()}`;
        await watched.append(
          { sessionId },
          Array.from({ length: size }, (_, i) => new HumanMessage(`m${i}`)),
        );
        sent.length = 0;
        await chain.invoke("q", { configurable: { sessionId } });
        expect(sent).toEqual(["START TRANSACTION; INSERT", "START TRANSACTION; SELECT"]);
        expect(transcript(await watched.read({ sessionId }, { last: 3 }))).toEqual([`human: m${size - 1}`, "human: q", `ai: saw ${Math.min(size, 20) + 1}`]);
        expect(await watched.count({ sessionId })).toBe(size + 2);
      }
    } finally {
      await watched.close();
    }
  });

  it("runs a transaction InnoDB rolled back for a deadlock again, and gives up typed after 5 tries with nothing stored", async () => {
    const sent: string[] = [];
    let deadlocks = 2;
    const retried = createMysqlStore({
      pool: watchedPool(sent, (sql) => (sql.startsWith("INSERT INTO memoria_turns") && deadlocks-- > 0 ? deadlock() : undefined)),
    });
    const key = { sessionId: `deadlock-${crypto.randomUUID()}` };
    try {
      await expect(retried.append(key, [new HumanMessage("once")], { turnId: "t1" })).resolves.toEqual({ appended: true });
      expect((await retried.read(key)).map((m) => m.content)).toEqual(["once"]);
      expect(sent.filter((s) => s === "ROLLBACK").length).toBe(2);
      deadlocks = Number.POSITIVE_INFINITY;
      sent.length = 0;
      const refused = await retried.append(key, [new HumanMessage("never")], { turnId: "t2" }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored" });
      expect(sent.filter((s) => s === "START TRANSACTION").length).toBe(5);
      expect(await retried.count(key)).toBe(1);
    } finally {
      await retried.close();
    }
  });

  it("runs a lone statement InnoDB rolled back for a deadlock again: two lock takes' upserts deadlock under contention (5 tries, then typed)", async () => {
    const sent: string[] = [];
    let deadlocks = 2;
    const take = (sql: string) => sql.startsWith("INSERT INTO memoria_locks");
    const retried = createMysqlStore({ pool: watchedPool(sent, (sql) => (take(sql) && deadlocks-- > 0 ? deadlock() : undefined)) });
    const key = { sessionId: `lock-deadlock-${crypto.randomUUID()}` };
    try {
      const lock = await retried.lock(key);
      expect(sent.filter((s) => s.startsWith("INSERT INTO memoria_locks")).length).toBe(3);
      await lock.release();
      deadlocks = Number.POSITIVE_INFINITY;
      sent.length = 0;
      const refused = await retried.lock(key, { waitMs: 0 }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "STORE_UNAVAILABLE" });
      expect(sent.filter((s) => s.startsWith("INSERT INTO memoria_locks")).length).toBe(5);
    } finally {
      await retried.close();
    }
  });

  it("runs an append script InnoDB rolled back for a deadlock again (5 tries, then typed), and one that met a duplicate turn id as a transaction", async () => {
    const sent: string[] = [];
    let deadlocks = 2;
    let duplicates = 0;
    const duplicate = () => Object.assign(new Error("Duplicate entry for key 'PRIMARY'"), { code: "ER_DUP_ENTRY", errno: 1062, sqlState: "23000" });
    const script = (sql: string) => sql.includes("@memoria_passed");
    const fail = (sql: string) => (!script(sql) ? undefined : deadlocks-- > 0 ? deadlock() : duplicates-- > 0 ? duplicate() : undefined);
    const retried = createMysqlStore({ pool: watchedPool(sent, fail, true) });
    const key = { sessionId: `script-deadlock-${crypto.randomUUID()}` };
    try {
      await expect(retried.append(key, [new HumanMessage("once")], { turnId: "t1" })).resolves.toEqual({ appended: true });
      expect(sent.filter((s) => s === "ROLLBACK").length).toBe(2);
      deadlocks = Number.POSITIVE_INFINITY;
      const refused = await retried.append(key, [new HumanMessage("never")], { turnId: "t2" }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored" });
      deadlocks = 0;
      duplicates = 1;
      sent.length = 0;
      await expect(retried.append(key, [new HumanMessage("twice?")], { turnId: "t1" })).resolves.toEqual({ appended: false });
      expect(sent.slice(0, 3)).toEqual(["START TRANSACTION; SET", "ROLLBACK", "START TRANSACTION"]);
      expect((await retried.read(key)).map((m) => m.content)).toEqual(["once"]);
    } finally {
      await retried.close();
    }
  });

  it("fails fast with STORE_UNAVAILABLE when the server is down, saying nothing was stored", async () => {
    const down = createMysqlStore({ uri: `mysql://root@127.0.0.1:${await freePort()}/memoria` });
    try {
      const read = await down.read({ sessionId: "x" }).catch((error: unknown) => error);
      expect(read).toMatchObject({ code: "STORE_UNAVAILABLE", message: expect.stringContaining("ECONNREFUSED") });
      await expect(down.append({ sessionId: "x" }, [new HumanMessage("x")])).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored" });
    } finally {
      await down.close();
    }
  });

  it("fails typed while another process holds the migration lock past its wait, and starts on the next call", async () => {
    const holder = await mysql.createConnection({ uri });
    const tablePrefix = `w${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}_`;
    const waiting = createMysqlStore({ uri, tablePrefix, operationTimeoutMs: 1_000 });
    try {
      await holder.query("SELECT GET_LOCK('memoria:migrate', 5)");
      await expect(waiting.ready()).rejects.toMatchObject({
        code: "STORE_UNAVAILABLE",
        outcome: "not-stored",
        message: expect.stringContaining("schema migration"),
      });
      await holder.query("SELECT RELEASE_LOCK('memoria:migrate')");
      await waiting.ready();
      await waiting.append({ sessionId: "after" }, [new HumanMessage("ok")]);
      expect(await waiting.count({ sessionId: "after" })).toBe(1);
    } finally {
      await waiting.close();
      await holder.end();
    }
  });
});
