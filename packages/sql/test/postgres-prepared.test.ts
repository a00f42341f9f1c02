import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type PostgresStoreOptions, createPostgresStore } from "../src/index.js";

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
    const { turn, prepared } = onOneConnection();
    const sessionId = `prepared-${crypto.randomUUID()}`;
    await turn(sessionId);
    const afterOne = await prepared();
    expect(afterOne.some((text) => text.includes("INSERT INTO prepared_messages"))).toBe(true);
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
