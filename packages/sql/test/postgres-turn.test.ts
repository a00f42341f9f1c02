import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type MemoryStrategy, RunnableWithMessageHistory, type SessionKey, encodeSessionKey } from "@memoria/core";
import { numbered } from "@memoria/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type PgClientLike, type PgPoolLike, type PgQuery, createPostgresStore } from "../src/index.js";

const connectionString = inject("databaseUrl");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const contents = (messages: readonly BaseMessage[] | undefined) => messages?.map((message) => message.content);

/** A window of 20, declared as its first read so the turn asks for it with the lock. */
const lastTwenty: MemoryStrategy = { name: "last-20", firstRead: { last: 20 }, load: ({ read }) => read({ last: 20 }) };
/** The same window, undeclared: the turn takes the lock, then reads. */
const undeclared: MemoryStrategy = { name: "last-20, undeclared", load: ({ read }) => read({ last: 20 }) };

describe("a PostgreSQL turn", () => {
  const real = new pg.Pool({ connectionString, max: 4 });
  const sent: string[] = [];
  /** Records a query's first three words, then sends it. */
  const noted = <T>(query: string | PgQuery, send: () => T): T => {
    sent.push((typeof query === "string" ? query : query.text).trim().split(/\s+/).slice(0, 3).join(" "));
    return send();
  };
  /** The rows each lock-and-read query's read gave (its last result: after SET TRANSACTION, the try, and any PREPARE). */
  const lockReadRows: number[] = [];
  const watched = async <T>(query: string | PgQuery, send: () => Promise<T>): Promise<T> => {
    const result = await send();
    if (typeof query === "string" && query.startsWith("SET TRANSACTION"))
      lockReadRows.push((result as unknown as { rows: unknown[] }[]).at(-1)?.rows.length ?? -1);
    return result;
  };
  const wrappers = new WeakMap<pg.PoolClient, PgClientLike>();
  const pool: PgPoolLike = {
    query: (sql, params) => noted(sql, () => watched(sql, () => real.query(sql, params))),
    // One wrapper per connection, as a pool's clients are: the store knows what each has prepared.
    connect: async () => {
      const client = await real.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = { query: (sql, params) => noted(sql, () => watched(sql, () => client.query(sql, params))), release: (error) => client.release(error) };
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => real.end(),
  };
  const store = createPostgresStore({ pool });
  const model = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`));

  beforeAll(() => store.ready());
  afterAll(async () => {
    await store.close();
    await real.end();
  });

  /** The queries one turn sends, on a session holding `size` messages. */
  async function turnCost(memory: MemoryStrategy, size: number): Promise<string[]> {
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory });
    const sessionId = `cost-${size}-${crypto.randomUUID()}`;
    if (size > 0) await store.append({ sessionId }, numbered(size));
    sent.length = 0;
    await chain.invoke("q", { configurable: { sessionId } });
    return [...sent];
  }

  it("costs 2 round trips at 0, 10 and 2,000 stored messages: the lock with the strategy's first read, and one statement that appends and releases", async () => {
    // The lock's try and the window's read go as one query (one transaction, the read in a
    // snapshot taken after the try; its lock row is unlogged, so its commit waits for no
    // flush); then fence, turn id, session upsert, messages and the lock's release as one
    // statement: the turn's one durable commit.
    for (const size of [0, 10, 2_000]) expect(await turnCost(lastTwenty, size)).toEqual(["SET TRANSACTION ISOLATION", "WITH c AS"]);
  });

  it("writes state in 1 round trip, fenced or not, new session or not; a stale lock writes none of it", async () => {
    const key = { userId: "ada", conversationId: `state-${crypto.randomUUID()}` };
    const cost = async (write: () => Promise<unknown>) => {
      sent.length = 0;
      await write();
      return [...sent];
    };
    expect(await cost(() => store.setState(key, "summary", { text: "first" }))).toEqual(["WITH c AS"]); // creates the session, with its key fields
    expect((await store.list({ userId: "ada" })).sessions).toContainEqual(key);
    const lock = await store.lock!(key);
    expect(await cost(() => store.setStates(key, { summary: { text: "second" }, entities: ["Ada"] }, { lock }))).toEqual(["WITH c AS"]);
    await lock.release();
    const stale = { token: "a-holder-that-lost-the-lock", lost: true, release: async () => {} };
    await expect(store.setStates(key, { summary: "late", entities: [] }, { lock: stale })).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(await store.getAllState(key)).toEqual({ entities: ["Ada"], summary: { text: "second" } });
  });

  it("a state write to an expired session starts it afresh: the one statement writes nothing, and the transaction deletes the old session first", async () => {
    const fading = createPostgresStore({ pool, ttlSeconds: 1 });
    try {
      const key = { sessionId: `expired-${crypto.randomUUID()}` };
      await fading.append(key, numbered(3));
      await fading.setStates(key, { summary: "old", entities: ["Ada"] });
      await sleep(1_100);
      sent.length = 0;
      await fading.setState(key, "summary", "new");
      expect(sent[0]).toBe("WITH c AS");
      expect(sent.slice(1)).toContain("BEGIN");
      expect(await fading.count(key)).toBe(0);
      expect(await fading.getAllState(key)).toEqual({ summary: "new" });
    } finally {
      await fading.close();
    }
  });

  it("costs 3 when the strategy does not declare its first read: lock, read, and the append", async () => {
    expect(await turnCost(undeclared, 10)).toEqual(["INSERT INTO memoria_locks", "SELECT payload::text AS", "WITH c AS"]);
  });

  it("a turn's read under hostile session ids (quotes, backslashes, dollar-quote tags, placeholders) is the session's, whole and windowed", async () => {
    const keys: SessionKey[] = [
      { sessionId: "it's \\' $$ $1 ? -- ; DROP TABLE memoria_locks; 日本 🙂" },
      { userId: "o'brien\\", conversationId: "?$tag$?" },
      { sessionId: "$v$'); DELETE FROM memoria_messages; --$v1$ $v2" },
      { sessionId: "ends with the tag's start $v" },
    ];
    for (const key of keys) {
      await store.append(key, numbered(5));
      for (const read of [{}, { last: 2 }]) {
        const turn = await store.openTurn(key, { read });
        expect(contents(turn.history)).toEqual(contents(await store.read(key, read)));
        expect(turn.history).toHaveLength(read.last ?? 5);
        await turn.release();
      }
    }
  });

  it("a try that finds the lock held reads nothing: the read gives rows only to the lock's owner", async () => {
    const key = { sessionId: crypto.randomUUID() };
    await store.append(key, numbered(30));
    const held = await store.lock!(key);
    lockReadRows.length = 0;
    await expect(store.openTurn(key, { read: {}, waitMs: 150 })).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
    expect(lockReadRows.length).toBeGreaterThan(1);
    expect(new Set(lockReadRows)).toEqual(new Set([0]));
    await held.release();
    lockReadRows.length = 0;
    const turn = await store.openTurn(key, { read: {} });
    expect(lockReadRows).toEqual([30]);
    await turn.release();
  });
});

describe("a PostgreSQL turn: its lock taken with its read", () => {
  const tablePrefix = `lockread_${crypto.randomUUID().slice(0, 8)}_`;
  const store = createPostgresStore({ connectionString, tablePrefix });
  const client = new pg.Client({ connectionString });
  beforeAll(async () => {
    await store.ready();
    await client.connect();
  });
  afterAll(async () => {
    await store.close();
    await client.end();
  });

  /** Waits until a backend of another session waits on a lock (a row lock here). */
  async function someoneWaits(): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
      if (rows[0].n > 0) return;
      await sleep(10);
    }
    throw new Error("no backend waited on a lock");
  }

  it("sees the turn whose release it waited for: the read runs after the lock is taken, in a snapshot of its own", async () => {
    const key = { sessionId: crypto.randomUUID() };
    const id = encodeSessionKey(key);
    const previous = await store.lock!(key);
    await store.append(key, numbered(3), { lock: previous });
    // What the previous holder's last statement does (append and give the lock back),
    // held open in a transaction of its own so the next lock must wait for its commit.
    await client.query("BEGIN");
    await client.query(`DELETE FROM ${tablePrefix}locks WHERE session_id = $1`, [id]);
    await client.query(
      `INSERT INTO ${tablePrefix}messages (session_id, seq, turn_id, payload) SELECT session_id, 3, turn_id, payload FROM ${tablePrefix}messages WHERE session_id = $1 AND seq = 0`,
      [id],
    );
    await client.query(`UPDATE ${tablePrefix}sessions SET next_seq = 4, message_count = 4 WHERE id = $1`, [id]);
    let settled = false;
    const next = store.openTurn(key, { read: {} }).finally(() => {
      settled = true;
    });
    await someoneWaits();
    expect(settled).toBe(false);
    await client.query("COMMIT");
    const turn = await next;
    // Taken after the commit, the turn's read holds the turn that commit stored.
    expect(turn.history).toHaveLength(4);
    expect(contents(turn.history)).toEqual(contents(await store.read(key)));
    await turn.release();
  });

  it("a turn that waits for another turn's last save reads the session as that save left it", async () => {
    const key = { sessionId: crypto.randomUUID() };
    await store.append(key, numbered(2));
    const held = await store.openTurn(key);
    const next = store.openTurn(key, { read: { last: 5 }, waitMs: 5_000 });
    await sleep(30);
    await held.save([new HumanMessage("stored under the first lock")], { last: true });
    const turn = await next;
    expect(contents(turn.history)).toEqual(["m0", "m1", "stored under the first lock"]);
    await turn.release();
  });
});
