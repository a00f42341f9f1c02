import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileSystemChatMessageHistory } from "@langchain/community/stores/message/file_system";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { RedisChatMessageHistory } from "@langchain/community/stores/message/ioredis";
import { type BaseChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage, HumanMessage, mapChatMessagesToStoredMessages } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import type { ChatPromptValueInterface } from "@langchain/core/prompt_values";
import { RunnableLambda, RunnableWithMessageHistory as LangChainWrapper } from "@langchain/core/runnables";
import { type HistoryStore, type MemoryStrategy, RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { createFileStore } from "@memoria/file";
import { windowMemory } from "@memoria/memory";
import { createMongoStore } from "@memoria/mongodb";
import { createRedisStore } from "@memoria/redis";
import { createMysqlStore, createPostgresStore, createSqliteStore } from "@memoria/sql";
import { Redis } from "ioredis";
import pg from "pg";
import { type BareEngine, bareFile, bareMemory, bareMysql, barePostgres, bareRedis, bareSqlite } from "./bare-engines.js";

/** A model that costs nothing, so a turn measures the memory layer. */
export const trivialModel = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`ok ${messages.length}`));

/** The README's quick start prompt, into the trivial model. */
const promptChain = ChatPromptTemplate.fromMessages([
  ["system", "You are a helpful assistant."],
  new MessagesPlaceholder("history"),
  ["human", "{question}"],
]).pipe(RunnableLambda.from((value: ChatPromptValueInterface) => new AIMessage(`ok ${value.toChatMessages().length}`)));
const PROMPT_KEYS = { inputMessagesKey: "question", historyMessagesKey: "history" } as const;

/** `count` alternating human / AI messages of about 60 characters. */
export function conversation(count: number, from = 0): BaseMessage[] {
  return Array.from({ length: count }, (_, i) =>
    (from + i) % 2 === 0
      ? new HumanMessage(`question number ${from + i}: what do you think about this?`)
      : new AIMessage(`answer number ${from + i}: I think it is quite reasonable, yes.`),
  );
}

const BATCH = 5_000;

/** One system's view of one store kind. */
export interface Side {
  /** Puts `count` messages into a fresh session. */
  seed(sessionId: string, count: number): Promise<void>;
  /** Removes the session. */
  clear(sessionId: string): Promise<void>;
  /** The largest session this side can be seeded with in reasonable time. @default no limit */
  maxSeed?: number;
  /** The same in the quick smoke run. @default maxSeed */
  quickMaxSeed?: number;
  /** One turn through the system's RunnableWithMessageHistory with a prompt of the last 20 messages (memoria) or the whole history (LangChain, which cannot window its reads). */
  turn(sessionId: string): Promise<void>;
  /** One turn with the default strategy, which reads the whole history (memoria's default; LangChain's only one). */
  turnWhole(sessionId: string): Promise<void>;
  /** The same turn through a prompt: `MessagesPlaceholder("history")` and `{question}`, with `inputMessagesKey` and `historyMessagesKey` (the README's quick start). */
  turnPrompt(sessionId: string): Promise<void>;
  /** The last 20 messages of the session. */
  readLast20(sessionId: string): Promise<BaseMessage[]>;
  /** The session's messages, in order. */
  readAll(sessionId: string): Promise<BaseMessage[]>;
  /** The wrapper with the default (whole-history) strategy, for concurrency checks. */
  wrapper(runnable: RunnableLambda<BaseMessage[], AIMessage>): { invoke(input: BaseMessage[], config: object): Promise<unknown> };
  close(): Promise<void>;
}

export interface StoreKind {
  name: string;
  /** The largest session measured on this store. @default no limit */
  maxSize?: number;
  /** The largest session the quick smoke run measures (a slow server's). @default maxSize */
  quickMaxSize?: number;
  memoria: Side;
  /** LangChain.js's history for the same backend, where it has one. */
  langchain?: Side;
  /** The bare engine: the ceiling of each row. */
  bare?: BareEngine;
  /**
   * Lets the server finish the work the seeding and the previous row left it (for
   * PostgreSQL: vacuum, statistics and a checkpoint), so it does not run between one
   * row's samples and fall on whichever contender it meets. Done for all sides at once.
   */
  settle?(): Promise<void>;
}

/** `turnSize`: messages per seeded append; the file store is seeded in real two-message turns (one line each). */
export function memoriaSide(store: HistoryStore, seeding: { store?: HistoryStore; turnSize?: number } = {}): Side {
  const last20: MemoryStrategy = windowMemory({ k: 10 });
  const chain = new RunnableWithMessageHistory({ runnable: trivialModel, store, memory: last20 });
  const wholeChain = new RunnableWithMessageHistory({ runnable: trivialModel, store });
  const promptTurns = new RunnableWithMessageHistory({ runnable: promptChain, store, ...PROMPT_KEYS });
  const seedStore = seeding.store ?? store;
  const batch = seeding.turnSize ?? BATCH;
  return {
    async seed(sessionId, count) {
      for (let from = 0; from < count; from += batch) await seedStore.append({ sessionId }, conversation(Math.min(batch, count - from), from));
    },
    clear: (sessionId) => store.clear({ sessionId }),
    async turn(sessionId) {
      await chain.invoke([new HumanMessage("and what now?")], { configurable: { sessionId } });
    },
    async turnWhole(sessionId) {
      await wholeChain.invoke([new HumanMessage("and what now?")], { configurable: { sessionId } });
    },
    async turnPrompt(sessionId) {
      await promptTurns.invoke({ question: "and what now?" }, { configurable: { sessionId } });
    },
    readLast20: (sessionId) => store.read({ sessionId }, { last: 20 }),
    readAll: (sessionId) => store.read({ sessionId }),
    wrapper: (runnable) => new RunnableWithMessageHistory({ runnable, store }),
    close: () => store.close(),
  };
}

function langchainSide(history: (sessionId: string) => BaseChatMessageHistory, seed: Side["seed"], close: () => Promise<void>): Side {
  const chain = new LangChainWrapper({ runnable: trivialModel, getMessageHistory: history });
  const promptTurns = new LangChainWrapper({ runnable: promptChain, getMessageHistory: history, ...PROMPT_KEYS });
  const turn = async (sessionId: string) => {
    await chain.invoke([new HumanMessage("and what now?")], { configurable: { sessionId } });
  };
  return {
    seed,
    clear: (sessionId) => history(sessionId).clear(),
    turn,
    turnWhole: turn,
    async turnPrompt(sessionId) {
      await promptTurns.invoke({ question: "and what now?" }, { configurable: { sessionId } });
    },
    // LangChain's histories can only read everything; a window is a slice of it.
    readLast20: async (sessionId) => (await history(sessionId).getMessages()).slice(-20),
    readAll: (sessionId) => history(sessionId).getMessages(),
    wrapper: (runnable) => new LangChainWrapper({ runnable, getMessageHistory: history }),
    close,
  };
}

export function memoryKind(): StoreKind {
  const histories = new Map<string, InMemoryChatMessageHistory>();
  const history = (sessionId: string) => {
    let found = histories.get(sessionId);
    if (!found) {
      found = new InMemoryChatMessageHistory();
      histories.set(sessionId, found);
    }
    return found;
  };
  return {
    name: "in-memory",
    memoria: memoriaSide(createInMemoryStore({ maxSessions: 1_000_000 })),
    bare: bareMemory(),
    langchain: langchainSide(
      history,
      async (sessionId, count) => {
        for (let from = 0; from < count; from += BATCH) await history(sessionId).addMessages(conversation(Math.min(BATCH, count - from), from));
      },
      async () => histories.clear(),
    ),
  };
}

export function fileKind(): StoreKind {
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-file-"));
  // LangChain's file history keeps every session in one JSON file, rewritten on every message.
  const history = (sessionId: string) => new FileSystemChatMessageHistory({ sessionId, filePath: join(dir, "langchain.json") });
  const side = langchainSide(
    history,
    async (sessionId, count) => {
      for (const message of conversation(count)) await history(sessionId).addMessage(message);
    },
    async () => {},
  );
  return {
    name: "file",
    memoria: memoriaSide(createFileStore({ directory: join(dir, "memoria") }), {
      // Seeding is preparation: no fsync, but real turns, as a conversation writes them.
      store: createFileStore({ directory: join(dir, "memoria"), fsync: "none" }),
      turnSize: 2,
    }),
    // Seeding goes through addMessage, one full-file rewrite per message: past 1,000 it
    // takes too long (and its 1,000 took most of the quick run).
    langchain: { ...side, maxSeed: 1_000, quickMaxSeed: 20 },
    bare: bareFile(dir),
  };
}

/**
 * `realServer`: false on the compatible test server, whose queries scan the
 * collection (their cost follows the collection, not the session), so sizes stop
 * at 1,000 there (20 in the quick run, where its 1,000-message turns took most of the time). LangChain's MongoDBChatMessageHistory appends with $push, which
 * that server lacks.
 */
export function mongoKind(url: string, realServer: boolean): StoreKind {
  return {
    name: "mongodb",
    memoria: memoriaSide(createMongoStore({ url, dbName: "bench" })),
    maxSize: realServer ? undefined : 1_000,
    quickMaxSize: realServer ? undefined : 20,
  };
}

export function sqliteKind(): StoreKind {
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-"));
  // LangChain.js has no SQLite chat history; the ceiling (W6) is a bare better-sqlite3 loop.
  return { name: "sqlite", memoria: memoriaSide(createSqliteStore({ path: join(dir, "bench.db") })), bare: bareSqlite(dir) };
}

export async function postgresKind(url: string): Promise<StoreKind> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const table = "langchain_chat_histories";
  const history = (sessionId: string) => new PostgresChatMessageHistory({ sessionId, pool, tableName: table });
  await history("init").getMessages(); // creates LangChain's table
  // LangChain creates no index on session_id; without one every read scans the whole
  // table. We add it so the comparison is about design, not a missing index.
  await pool.query(`CREATE INDEX IF NOT EXISTS ${table}_session ON ${table} (session_id, id)`);
  return {
    name: "postgres",
    async settle() {
      await pool.query("VACUUM ANALYZE");
      await pool.query("CHECKPOINT");
    },
    memoria: memoriaSide(createPostgresStore({ connectionString: url })),
    bare: await barePostgres(url),
    langchain: langchainSide(
      history,
      async (sessionId, count) => {
        for (let from = 0; from < count; from += BATCH) {
          const rows = mapChatMessagesToStoredMessages(conversation(Math.min(BATCH, count - from), from)).map(({ type, data }) =>
            JSON.stringify({ ...data, type }),
          );
          await pool.query(`INSERT INTO ${table} (session_id, message) SELECT $1, m::jsonb FROM unnest($2::text[]) WITH ORDINALITY AS u(m, n) ORDER BY n`, [
            sessionId,
            rows,
          ]);
        }
      },
      () => pool.end(),
    ),
  };
}

/** MariaDB (MySQL's dialect of the SQL store); LangChain.js has no MySQL chat history. */
export async function mysqlKind(url: string): Promise<StoreKind> {
  return { name: "mysql", memoria: memoriaSide(createMysqlStore({ uri: url })), bare: await bareMysql(url) };
}

export function redisKind(url: string): StoreKind {
  const client = new Redis(url);
  const history = (sessionId: string) => new RedisChatMessageHistory({ sessionId, client });
  return {
    name: "redis",
    memoria: memoriaSide(createRedisStore({ url, keyPrefix: "bench:" })),
    bare: bareRedis(url),
    langchain: langchainSide(
      history,
      async (sessionId, count) => {
        for (let from = 0; from < count; from += BATCH) {
          // LangChain pushes each message to the head and reverses on read.
          const items = mapChatMessagesToStoredMessages(conversation(Math.min(BATCH, count - from), from)).map((m) => JSON.stringify(m));
          await client.lpush(sessionId, ...items);
        }
      },
      async () => {
        await client.quit();
      },
    ),
  };
}
