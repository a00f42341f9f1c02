/**
 * The ceiling of each row: the bare engine giving the same result with the simplest
 * layout and no memory layer. Messages are kept as the same JSON text memoria
 * stores; a read fetches them, parses each (`JSON.parse`) and turns them into
 * LangChain messages with LangChain's own `mapStoredMessagesToChatMessages`, since a
 * history read's result is LangChain messages. A turn is what a memory layer's turn
 * must do with the least around it: that read, the same model called with the
 * history and the input (through LangChain's `invoke`, as every wrapper calls it),
 * and a durable append of the input and the answer, serialized, made the way each
 * engine makes one (a Redis `RPUSH`, one
 * PostgreSQL or MySQL `INSERT` committed, one SQLite transaction with synchronous=FULL, one
 * file `write` and `fsync`, an array `push`).
 */
import { mkdirSync } from "node:fs";
import { appendFile, open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type BaseMessage, HumanMessage, mapStoredMessagesToChatMessages } from "@langchain/core/messages";
import { serializeMessage } from "@memoria/core";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import mysql from "mysql2/promise";
import pg from "pg";
import { conversation, trivialModel } from "./systems.js";

export interface BareEngine {
  seed(sessionId: string, count: number): Promise<void>;
  /** Removes the session. */
  clear(sessionId: string): Promise<void>;
  /** The last `last` messages (all when undefined), as LangChain messages. */
  read(sessionId: string, last?: number): Promise<BaseMessage[]>;
  /** A read, then a durable append of two messages. */
  turn(sessionId: string, last?: number): Promise<void>;
  close(): Promise<void>;
}

const texts = (count: number, from = 0) => conversation(count, from).map((message) => serializeMessage(message));
/** A turn's input: the same as memoria's and LangChain's turns send. */
const question = new HumanMessage("and what now?");
/** Stored texts as LangChain messages: parsed, then LangChain's own conversion. */
const parseAll = (items: string[]): BaseMessage[] => mapStoredMessagesToChatMessages(items.map((item) => JSON.parse(item)));
const BATCH = 5_000;

/** Turns a bare read and a bare append into a bare engine. */
function engine(parts: Pick<BareEngine, "seed" | "clear" | "read" | "close"> & { append(sessionId: string, items: string[]): Promise<void> }): BareEngine {
  return {
    seed: parts.seed,
    clear: parts.clear,
    read: parts.read,
    async turn(sessionId, last) {
      const history = await parts.read(sessionId, last);
      const answer = await trivialModel.invoke([...history, question]);
      await parts.append(sessionId, [serializeMessage(question), serializeMessage(answer)]);
    },
    close: parts.close,
  };
}

/** An array per session: a read is a slice (the objects themselves, as LangChain's history gives them). */
export function bareMemory(): BareEngine {
  const sessions = new Map<string, BaseMessage[]>();
  const of = (id: string) => sessions.get(id) ?? (sessions.set(id, []).get(id) as BaseMessage[]);
  return engine({
    seed: async (id, count) => void of(id).push(...parseAll(texts(count))),
    clear: async (id) => void sessions.delete(id),
    read: async (id, last) => (last === undefined ? of(id).slice() : of(id).slice(-last)),
    append: async (id, items) => void of(id).push(...parseAll(items)),
    close: async () => sessions.clear(),
  });
}

/** One list per session: `LRANGE`, `RPUSH`. */
export function bareRedis(url: string): BareEngine {
  const client = new Redis(url);
  const key = (id: string) => `bare:${id}`;
  return engine({
    async seed(id, count) {
      for (let from = 0; from < count; from += BATCH) await client.rpush(key(id), ...texts(Math.min(BATCH, count - from), from));
    },
    clear: async (id) => void (await client.del(key(id))),
    read: async (id, last) => parseAll(await client.lrange(key(id), last === undefined ? 0 : -last, -1)),
    append: async (id, items) => void (await client.rpush(key(id), ...items)),
    close: async () => void (await client.quit()),
  });
}

/** A table keyed by (session, seq); each append one `INSERT` in autocommit (one commit). */
export async function barePostgres(url: string): Promise<BareEngine> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  await pool.query(
    "CREATE TABLE IF NOT EXISTS bare_messages (session_id TEXT NOT NULL, seq BIGINT NOT NULL, payload JSON NOT NULL, PRIMARY KEY (session_id, seq))",
  );
  const next = new Map<string, number>();
  const append = async (id: string, items: string[]) => {
    const seq = next.get(id) ?? 0;
    next.set(id, seq + items.length);
    await pool.query("INSERT INTO bare_messages SELECT $1, $2::bigint + n - 1, p::json FROM unnest($3::text[]) WITH ORDINALITY AS u(p, n)", [id, seq, items]);
  };
  return engine({
    async seed(id, count) {
      for (let from = 0; from < count; from += BATCH) await append(id, texts(Math.min(BATCH, count - from), from));
    },
    async clear(id) {
      next.delete(id);
      await pool.query("DELETE FROM bare_messages WHERE session_id = $1", [id]);
    },
    async read(id, last) {
      const { rows } =
        last === undefined
          ? await pool.query<{ payload: string }>("SELECT payload::text AS payload FROM bare_messages WHERE session_id = $1 ORDER BY seq", [id])
          : await pool.query<{ payload: string }>(
              "SELECT payload FROM (SELECT seq, payload::text AS payload FROM bare_messages WHERE session_id = $1 ORDER BY seq DESC LIMIT $2) w ORDER BY seq",
              [id, last],
            );
      return parseAll(rows.map((row) => row.payload));
    },
    append,
    close: () => pool.end(),
  });
}

/** A table keyed by (session, seq) in MariaDB / MySQL; each append one multi-row `INSERT` in autocommit (one commit). */
export async function bareMysql(url: string): Promise<BareEngine> {
  const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
  await pool.query(
    "CREATE TABLE IF NOT EXISTS bare_messages (session_id VARCHAR(255) NOT NULL, seq BIGINT NOT NULL, payload LONGTEXT NOT NULL, PRIMARY KEY (session_id, seq))",
  );
  const next = new Map<string, number>();
  const append = async (id: string, items: string[]) => {
    const seq = next.get(id) ?? 0;
    next.set(id, seq + items.length);
    await pool.query("INSERT INTO bare_messages (session_id, seq, payload) VALUES ?", [items.map((item, i) => [id, seq + i, item])]);
  };
  return engine({
    async seed(id, count) {
      for (let from = 0; from < count; from += BATCH) await append(id, texts(Math.min(BATCH, count - from), from));
    },
    async clear(id) {
      next.delete(id);
      await pool.query("DELETE FROM bare_messages WHERE session_id = ?", [id]);
    },
    async read(id, last) {
      const [rows] =
        last === undefined
          ? await pool.query("SELECT payload FROM bare_messages WHERE session_id = ? ORDER BY seq", [id])
          : await pool.query("SELECT payload FROM (SELECT seq, payload FROM bare_messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?) w ORDER BY seq", [
              id,
              last,
            ]);
      return parseAll((rows as { payload: string }[]).map((row) => row.payload));
    },
    append,
    close: () => pool.end(),
  });
}

/** A table in its own file (WAL, synchronous=FULL); each append one transaction. */
export function bareSqlite(dir: string): BareEngine {
  const db = new Database(join(dir, "bare.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS m (session_id TEXT NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (session_id, seq))");
  const insert = db.prepare("INSERT INTO m VALUES (?, ?, ?)");
  const all = db.prepare("SELECT payload FROM m WHERE session_id = ? ORDER BY seq").pluck();
  const window = db.prepare("SELECT payload FROM (SELECT seq, payload FROM m WHERE session_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq").pluck();
  const remove = db.prepare("DELETE FROM m WHERE session_id = ?");
  const next = new Map<string, number>();
  const append = db.transaction((id: string, items: string[]) => {
    const seq = next.get(id) ?? 0;
    for (let i = 0; i < items.length; i++) insert.run(id, seq + i, items[i]);
    next.set(id, seq + items.length);
  });
  return engine({
    async seed(id, count) {
      for (let from = 0; from < count; from += BATCH) append(id, texts(Math.min(BATCH, count - from), from));
    },
    async clear(id) {
      next.delete(id);
      remove.run(id);
    },
    read: async (id, last) => parseAll((last === undefined ? all.all(id) : window.all(id, last)) as string[]),
    append: async (id, items) => append(id, items),
    close: async () => void db.close(),
  });
}

/** A JSONL file per session: a whole read reads the file, a window reads its last 64 KiB; an append is one write and an fsync. */
export function bareFile(dir: string): BareEngine {
  const folder = join(dir, "bare");
  mkdirSync(folder, { recursive: true });
  const path = (id: string) => join(folder, `${id}.jsonl`);
  const lines = (text: string) => text.split("\n").filter(Boolean);
  return engine({
    async seed(id, count) {
      for (let from = 0; from < count; from += BATCH) await appendFile(path(id), `${texts(Math.min(BATCH, count - from), from).join("\n")}\n`);
    },
    clear: (id) => rm(path(id), { force: true }),
    async read(id, last) {
      if (last === undefined) return parseAll(lines(await readFile(path(id), "utf8")));
      const handle = await open(path(id), "r");
      try {
        const { size } = await handle.stat();
        const length = Math.min(size, 64 * 1024);
        const buffer = Buffer.alloc(length);
        await handle.read(buffer, 0, length, size - length);
        const found = lines(buffer.toString("utf8"));
        return parseAll(found.slice(length < size ? Math.max(1, found.length - last) : Math.max(0, found.length - last)));
      } finally {
        await handle.close();
      }
    },
    async append(id, items) {
      const handle = await open(path(id), "a");
      try {
        await handle.write(`${items.join("\n")}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
    },
    close: async () => {},
  });
}
