import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type PgPoolLike, type PostgresStoreOptions, createPostgresStore } from "../src/index.js";

const connectionString = inject("databaseUrl");
const model = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`));

describe("PostgreSQL prepared statements", () => {
  const opened: { end(): Promise<void>; close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const { close, end } of opened.splice(0)) {
      await close();
      await end();
    }
  });

  /** A store over a pool of one connection, so a query of the test's runs on the store's connection. */
  function onOneConnection(options: Partial<PostgresStoreOptions> = {}) {
    const pool = new pg.Pool({ connectionString, max: 1 });
    const store = createPostgresStore({ pool, tablePrefix: "prepared_", ...options });
    opened.push({ close: () => store.close(), end: () => pool.end() });
    const chain = new RunnableWithMessageHistory({ runnable: model, store });
    const turn = (sessionId: string) => chain.invoke("q", { configurable: { sessionId } });
    const prepared = async () => (await pool.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements")).rows.map((row) => row.statement);
    return { pool, store, turn, prepared };
  }

  it("prepares a turn's statements once per connection, the append among them", async () => {
    const { pool, turn, prepared } = onOneConnection();
    const sessionId = `prepared-${crypto.randomUUID()}`;
    await turn(sessionId);
    const afterOne = await prepared();
    expect(afterOne.some((text) => text.includes("INSERT INTO prepared_messages"))).toBe(true);
    // The lock's try and read, sent together in one simple query, are prepared with SQL's PREPARE.
    const sqlPrepared = await pool.query("SELECT name FROM pg_prepared_statements WHERE name LIKE '%\\_sql'");
    expect(sqlPrepared.rows).toHaveLength(2);
    await turn(sessionId);
    // The second turn prepares nothing new: the connection kept the first's.
    expect(await prepared()).toEqual(afterOne);
  });

  it("prepares nothing with preparedStatements: false, and a turn still stores", async () => {
    const { store, turn, prepared } = onOneConnection({ preparedStatements: false });
    const sessionId = `unprepared-${crypto.randomUUID()}`;
    await turn(sessionId);
    await turn(sessionId);
    expect(await prepared()).toEqual([]);
    expect(await store.read({ sessionId })).toHaveLength(4);
  });

  it("a lock's try and read still run where the pool hands out a new client object for a connection, or the server dropped what it had prepared", async () => {
    const pool = new pg.Pool({ connectionString, max: 1 });
    // A pool wrapper, as instrumentation makes one: a fresh object on every checkout.
    const wrapped: PgPoolLike = {
      query: (query, values) => pool.query(query as string, values),
      connect: async () => {
        const client = await pool.connect();
        return { query: (query, values) => client.query(query as string, values), release: (error) => client.release(error) };
      },
      end: () => pool.end(),
    };
    const store = createPostgresStore({ pool: wrapped, tablePrefix: "prepared_" });
    opened.push({ close: () => store.close(), end: () => pool.end() });
    const key = { sessionId: `wrapped-${crypto.randomUUID()}` };
    await store.append(key, [new HumanMessage("one"), new HumanMessage("two")]);
    for (let i = 0; i < 3; i++) {
      if (i === 2) await pool.query("DEALLOCATE ALL");
      const turn = await store.openTurn(key, { read: { last: 1 } });
      expect(turn.history?.map((message) => message.content)).toEqual(["two"]);
      await turn.release().catch(() => undefined); // after DEALLOCATE, pg's own named statements are gone (the next test)
    }
  });

  it("names the option when the server lost the connection's statements (a pooler), and stores nothing", async () => {
    const { pool, turn } = onOneConnection();
    const sessionId = `lost-${crypto.randomUUID()}`;
    await turn(sessionId);
    // What a pooler that moves a client to another server connection does to it.
    await pool.query("DEALLOCATE ALL");
    const failure = await turn(sessionId).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "SAVE_FAILED", outcome: "not-stored", cause: { code: "STORE_UNAVAILABLE" } });
    expect((failure as Error).cause).toHaveProperty("message", expect.stringMatching(/preparedStatements: false/));
    const unprepared = createPostgresStore({ connectionString, tablePrefix: "prepared_", preparedStatements: false });
    try {
      expect(await unprepared.read({ sessionId })).toHaveLength(2);
    } finally {
      await unprepared.close();
    }
  });
});
