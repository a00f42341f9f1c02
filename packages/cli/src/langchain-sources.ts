import { readFile } from "node:fs/promises";
import { type JsonValue, MAX_TITLE_LENGTH, createSessionKey, encodeMessage, decodeMessage } from "@memoria/core";
import { loadPeerDependency } from "@memoria/core/store-kit";
import { UsageError } from "./cli-error.js";
import type { SessionSnapshot } from "./snapshot.js";

/** Where LangChain.js keeps chat histories, and how to name each one as a memoria session. */
export type LangChainLayout = "langchain-redis" | "langchain-postgres" | "langchain-file";

export interface LangChainSourceOptions {
  /** Redis: which keys hold histories (`SCAN MATCH`). @default "*" */
  pattern?: string;
  /** Redis: a prefix cut off each key to give the sessionId (e.g. `message_store:`). */
  stripPrefix?: string;
  /** PostgreSQL: the table PostgresChatMessageHistory wrote. @default "langchain_chat_histories" */
  table?: string;
}

/** LangChain's stored messages (`{ type, data }`, as `mapChatMessagesToStoredMessages` wrote them) in codec form. */
function messagesFrom(stored: unknown[], where: string): SessionSnapshot["messages"] {
  return stored.map((item, i) => {
    try {
      return encodeMessage(decodeMessage(item), i);
    } catch (error) {
      throw new UsageError(`${where}: message ${i + 1} is not a LangChain stored message (${(error as Error).message})`);
    }
  });
}

/**
 * RedisChatMessageHistory (`@langchain/community/stores/message/ioredis`, and
 * `@langchain/redis`): one list per session under the session id itself,
 * pushed to the left, so newest first.
 */
async function* fromRedis(url: string, options: LangChainSourceOptions): AsyncGenerator<SessionSnapshot> {
  const IORedis = loadPeerDependency<{ default?: new (url: string) => import("ioredis").Redis } & (new (url: string) => import("ioredis").Redis)>(
    "ioredis",
    "Importing LangChain's Redis histories",
    import.meta.url,
  );
  const Redis = IORedis.default ?? IORedis;
  const client = new Redis(url);
  client.on("error", () => {});
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", options.pattern ?? "*", "COUNT", 500, "TYPE", "list");
      cursor = next;
      for (const name of keys.sort()) {
        const items = (await client.lrange(name, 0, -1)).reverse();
        const stored = items.map((item) => JSON.parse(item) as unknown);
        const prefix = options.stripPrefix ?? "";
        const sessionId = prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
        yield { key: createSessionKey({ sessionId }), state: {}, messages: messagesFrom(stored, `redis key ${name}`) };
      }
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** PostgresChatMessageHistory: a row per message (`session_id`, `message` JSONB), in `id` order. */
async function* fromPostgres(url: string, options: LangChainSourceOptions): AsyncGenerator<SessionSnapshot> {
  const table = options.table ?? "langchain_chat_histories";
  if (!TABLE.test(table)) throw new UsageError(`--table must be a table name, got ${JSON.stringify(table)}.`);
  const pg = loadPeerDependency<{ default?: typeof import("pg"); Pool: typeof import("pg").Pool }>(
    "pg",
    "Importing LangChain's PostgreSQL histories",
    import.meta.url,
  );
  const Pool = (pg.default ?? pg).Pool;
  const pool = new Pool({ connectionString: url, max: 2 });
  try {
    const sessions = await pool.query<{ session_id: string }>(`SELECT DISTINCT session_id FROM ${table} ORDER BY session_id`);
    for (const { session_id: sessionId } of sessions.rows) {
      const rows = await pool.query<{ message: unknown }>(`SELECT message FROM ${table} WHERE session_id = $1 ORDER BY id`, [sessionId]);
      yield {
        key: createSessionKey({ sessionId }),
        state: {},
        messages: messagesFrom(
          rows.rows.map((row) => row.message),
          `session ${sessionId}`,
        ),
      };
    }
  } finally {
    await pool.end();
  }
}

/**
 * FileSystemChatMessageHistory: one JSON file, `{ [userId]: { [sessionId]: { messages, context } } }`.
 * A history without a user becomes `{ sessionId }`, one with a user `{ userId, sessionId }`;
 * its context becomes the session's metadata (and its `title`, when it has one, the title).
 */
async function* fromFile(path: string): AsyncGenerator<SessionSnapshot> {
  let data: Record<string, Record<string, { messages?: unknown[]; context?: { [field: string]: JsonValue } }>>;
  try {
    data = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new UsageError(`cannot read ${path} as LangChain's file history: ${(error as Error).message}`);
  }
  for (const userId of Object.keys(data).sort()) {
    for (const sessionId of Object.keys(data[userId] ?? {}).sort()) {
      const entry = data[userId]?.[sessionId] ?? {};
      const key = createSessionKey(userId === "" ? { sessionId } : { userId, sessionId });
      const snapshot: SessionSnapshot = { key, state: {}, messages: messagesFrom(entry.messages ?? [], `${path} ${userId}/${sessionId}`) };
      if (entry.context && Object.keys(entry.context).length > 0) {
        snapshot.metadata = entry.context;
        const title = entry.context.title;
        if (typeof title === "string" && title.length > 0 && title.length <= MAX_TITLE_LENGTH && !/[\u0000-\u001f\u007f]/.test(title)) snapshot.title = title;
      }
      yield snapshot;
    }
  }
}

export function langChainSessions(layout: LangChainLayout, source: string, options: LangChainSourceOptions): AsyncGenerator<SessionSnapshot> {
  if (layout === "langchain-redis") return fromRedis(source, options);
  if (layout === "langchain-postgres") return fromPostgres(source, options);
  return fromFile(source);
}
