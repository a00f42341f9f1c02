import { createHash } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, stat, truncate, unlink, utimes, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import {
  type AppendOptions,
  type AppendResult,
  type HistoryStore,
  type JsonValue,
  type ListOptions,
  type LockOptions,
  MemoriaError,
  type ReadOptions,
  type SessionKey,
  type SessionKeyFilter,
  type SessionPage,
  StoreChatMessageHistory,
  StoreClosedError,
  type TurnLock,
  cloneJson,
  createKeyFilter,
  createSessionKey,
  decodeMessage,
  encodeMessages,
  encodeSessionKey,
  keyMatches,
  listLimit,
  readWindow,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
} from "@memoria/core";
import { lockFile } from "./file-lock.js";
import { type Header, type TurnLine, completeLines, isTurn, openIfExists, parseLine, tailTurns } from "./session-file.js";

export interface FileStoreOptions {
  /** The folder holding the sessions' files; created if missing. */
  directory: string;
  /**
   * `"always"`: each append is fsynced before it resolves, so a stored turn
   * survives power loss. `"none"`: it survives the process being killed (the
   * kernel has it) but may be lost if the machine loses power.
   * @default "always"
   */
  fsync?: "always" | "none";
  /**
   * Seconds a session lives after its last write (by the file's modification
   * time); unset, sessions never expire. Expired files are deleted by `prune()`.
   */
  ttlSeconds?: number;
  /** How many sessions' bookkeeping (count, turn ids) this process keeps. @default 1_000 */
  cacheSessions?: number;
}

export interface FileHistoryStore extends HistoryStore {
  /** Deletes the files of expired sessions; resolves with how many sessions. */
  prune(): Promise<number>;
}

/** What this process knows of a session's file (by inode), valid up to `offset` bytes. */
interface Known {
  ino: number;
  offset: number;
  count: number;
  turnIds: Set<string>;
}

interface Paths {
  dir: string;
  file: string;
  state: string;
  appendLock: string;
  turnLock: string;
}

/**
 * A history store in files: one append-only JSONL file per session, named by the
 * SHA-256 of the encoded session key (so ids never touch a path). The first line
 * holds the key; each further line is one turn (its id, the running message count,
 * its messages), written with one `write`. Derived state sits beside it in a JSON
 * file replaced atomically.
 */
export function createFileStore(options: FileStoreOptions): FileHistoryStore {
  if (typeof options?.directory !== "string" || options.directory === "") {
    throw new MemoriaError("INVALID_ARGUMENT", "createFileStore needs a `directory`.");
  }
  const root = resolve(options.directory);
  const sync = (options.fsync ?? "always") === "always";
  const ttlMs = options.ttlSeconds === undefined ? undefined : options.ttlSeconds * 1000;
  if (ttlMs !== undefined && !(ttlMs > 0)) throw new MemoriaError("INVALID_ARGUMENT", `ttlSeconds must be > 0, got ${options.ttlSeconds}.`);
  const cacheLimit = options.cacheSessions ?? 1_000;
  const known = new Map<string, Known>();
  let closed = false;

  function paths(key: SessionKey): Paths {
    const hash = createHash("sha256").update(encodeSessionKey(key)).digest("hex");
    const dir = join(root, hash.slice(0, 2));
    const base = join(dir, hash);
    return { dir, file: `${base}.jsonl`, state: `${base}.state.json`, appendLock: `${base}.append.lock`, turnLock: `${base}.turn.lock` };
  }

  function ensureOpen(): void {
    if (closed) throw new StoreClosedError("file");
  }

  function expired(mtimeMs: number): boolean {
    return ttlMs !== undefined && mtimeMs + ttlMs <= Date.now();
  }

  /** The file's size, or undefined when it is missing or expired. */
  async function liveSize(file: string): Promise<number | undefined> {
    try {
      const info = await stat(file);
      return expired(info.mtimeMs) ? undefined : info.size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** Runs `body` holding the session's append lock (short; across processes). */
  async function exclusive<T>(key: SessionKey, p: Paths, body: () => Promise<T>): Promise<T> {
    await mkdir(p.dir, { recursive: true });
    const lock = await lockFile(p.appendLock, key, { ttlMs: 30_000, waitMs: 60_000 });
    try {
      return await body();
    } finally {
      await lock.release();
    }
  }

  /**
   * Brings this process's bookkeeping of a file up to date (under the append
   * lock): parses only what was appended since, truncates a torn last line.
   */
  async function catchUp(p: Paths): Promise<Known> {
    const info = await stat(p.file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (!info || expired(info.mtimeMs)) {
      await Promise.all([unlink(p.file).catch(() => {}), unlink(p.state).catch(() => {})]); // missing or expired: start afresh
      known.delete(p.file);
      return { ino: 0, offset: 0, count: 0, turnIds: new Set() };
    }
    let size = info.size;
    let entry = known.get(p.file);
    // A file replaced by a compaction (a new inode) or cut shorter is read again from its start.
    if (!entry || entry.ino !== info.ino || entry.offset > size) entry = { ino: info.ino, offset: 0, count: 0, turnIds: new Set() };
    if (size > entry.offset) {
      const handle = await open(p.file, "r");
      try {
        const buffer = Buffer.alloc(size - entry.offset);
        await handle.read(buffer, 0, buffer.length, entry.offset);
        const { lines, rest } = completeLines(buffer.toString("utf8"));
        for (const line of lines) {
          const record = parseLine(line, p.file);
          if (!isTurn(record)) continue;
          entry.turnIds.add(record.t);
          entry.count = record.n;
        }
        const tornBytes = Buffer.byteLength(rest);
        if (tornBytes > 0) {
          // A write that never finished (the writer was killed): cut it off.
          size -= tornBytes;
          await truncate(p.file, size);
        }
        entry.offset = size;
      } finally {
        await handle.close();
      }
    }
    known.delete(p.file);
    known.set(p.file, entry);
    while (known.size > cacheLimit) known.delete(known.keys().next().value as string);
    return entry;
  }

  /** Appends `text` in one write, creating the file with its header first if needed. */
  async function write(key: SessionKey, p: Paths, entry: Known, text: string): Promise<void> {
    const line = entry.offset === 0 ? `${JSON.stringify({ memoria: 1, key } satisfies Header)}\n${text}` : text;
    const handle = await open(p.file, "a");
    try {
      await handle.write(line);
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
    entry.offset += Buffer.byteLength(line);
    if (entry.ino === 0) entry.ino = (await stat(p.file)).ino;
  }

  async function readState(p: Paths): Promise<Record<string, JsonValue>> {
    try {
      return JSON.parse(await readFile(p.state, "utf8")) as Record<string, JsonValue>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
  }

  async function removeSession(p: Paths): Promise<boolean> {
    known.delete(p.file);
    let removed = false;
    for (const file of [p.file, p.state]) {
      try {
        await unlink(file);
        removed = true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
    return removed;
  }

  /** Every live session: the header line of each file (a directory walk). */
  async function allSessions(): Promise<{ key: SessionKey; id: string }[]> {
    const found: { key: SessionKey; id: string }[] = [];
    let shards: string[];
    try {
      shards = await readdir(root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    for (const shard of shards) {
      let names: string[];
      try {
        names = await readdir(join(root, shard));
      } catch {
        continue; // not a folder of ours
      }
      for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
        const file = join(root, shard, name);
        const handle = await openIfExists(file);
        if (!handle) continue;
        try {
          const info = await handle.stat();
          if (expired(info.mtimeMs)) continue;
          const head = Buffer.alloc(Math.min(info.size, 8_192));
          await handle.read(head, 0, head.length, 0);
          const firstLine = head.toString("utf8").split("\n")[0] ?? "";
          const header = JSON.parse(firstLine) as Header;
          const key = createSessionKey(header.key);
          found.push({ key, id: encodeSessionKey(key) });
        } catch {
          // a file still being created, or not ours
        } finally {
          await handle.close();
        }
      }
    }
    return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  const store: FileHistoryStore = {
    name: "file",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    async read(key: SessionKey, readOptions?: ReadOptions): Promise<BaseMessage[]> {
      ensureOpen();
      const p = paths(createSessionKey(key));
      const last = readWindow(readOptions);
      if (last === 0) return [];
      const size = await liveSize(p.file);
      if (size === undefined) return [];
      const handle = await openIfExists(p.file);
      if (!handle) return [];
      try {
        const turns = await tailTurns(handle, size, last ?? Number.POSITIVE_INFINITY, p.file);
        const messages = turns.flatMap((turn) => turn.m);
        const window = last === undefined ? messages : messages.slice(-last);
        return window.map((message) => decodeMessage(message));
      } finally {
        await handle.close();
      }
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const turnId = turnIdOf(appendOptions);
      const encoded = encodeMessages(messages);
      if (encoded.length === 0) return { appended: true };
      const p = paths(sessionKey);
      return exclusive(sessionKey, p, async () => {
        const entry = await catchUp(p);
        if (entry.turnIds.has(turnId)) return { appended: false };
        const line = `${JSON.stringify({ t: turnId, n: entry.count + encoded.length, m: encoded } satisfies TurnLine)}\n`;
        await write(sessionKey, p, entry, line);
        entry.count += encoded.length;
        entry.turnIds.add(turnId);
        return { appended: true };
      });
    },

    async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
      ensureOpen();
      const p = paths(createSessionKey(key));
      stateName(name);
      if ((await liveSize(p.file)) === undefined) return undefined;
      const value = (await readState(p))[name];
      return value === undefined ? undefined : cloneJson(value);
    },

    async setState(key: SessionKey, name: string, value: JsonValue): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      stateName(name);
      const checked = stateValue(value);
      const p = paths(sessionKey);
      await exclusive(sessionKey, p, async () => {
        const entry = await catchUp(p);
        if (entry.offset === 0) await write(sessionKey, p, entry, ""); // a session with state only: its header
        const state = { ...(await readState(p)), [name]: checked };
        const temporary = `${p.state}.${crypto.randomUUID()}.tmp`;
        await writeFile(temporary, JSON.stringify(state), { flush: sync });
        await rename(temporary, p.state);
        const now = new Date();
        await utimes(p.file, now, now); // a write renews the session's TTL
      });
    },

    async trim(key: SessionKey, trimOptions: { oldest: number }): Promise<number> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const oldest = trimCount(trimOptions);
      if (oldest === 0) return 0;
      const p = paths(sessionKey);
      return exclusive(sessionKey, p, async () => {
        const entry = await catchUp(p);
        if (entry.offset === 0) return 0;
        const { lines } = completeLines(await readFile(p.file, "utf8"));
        let toDrop = oldest;
        let removed = 0;
        let count = 0;
        const kept = lines.map((line) => {
          const record = parseLine(line, p.file);
          if (!isTurn(record)) return line;
          const drop = Math.min(toDrop, record.m.length);
          toDrop -= drop;
          removed += drop;
          count += record.m.length - drop;
          // A turn whose messages all went keeps its line (and id), so a retry of it is still refused.
          return JSON.stringify({ t: record.t, n: count, m: record.m.slice(drop) } satisfies TurnLine);
        });
        const temporary = `${p.file}.${crypto.randomUUID()}.tmp`;
        await writeFile(temporary, `${kept.join("\n")}\n`, { flush: sync });
        await rename(temporary, p.file);
        known.delete(p.file);
        return removed;
      });
    },

    async clear(key: SessionKey): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const p = paths(sessionKey);
      await exclusive(sessionKey, p, () => removeSession(p));
    },

    async count(key: SessionKey): Promise<number> {
      ensureOpen();
      const p = paths(createSessionKey(key));
      const size = await liveSize(p.file);
      if (size === undefined) return 0;
      const handle = await openIfExists(p.file);
      if (!handle) return 0;
      try {
        const [last] = await tailTurns(handle, size, 1, p.file);
        return last?.n ?? 0;
      } finally {
        await handle.close();
      }
    },

    async list(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<SessionPage> {
      ensureOpen();
      const match = createKeyFilter(filter);
      const limit = listLimit(listOptions);
      const cursor = listOptions?.cursor;
      const matching = (await allSessions()).filter(({ key, id }) => keyMatches(key, match) && (cursor === undefined || id > cursor));
      const page = matching.slice(0, limit);
      const sessions = page.map(({ key }) => key);
      return matching.length > limit ? { sessions, cursor: page[page.length - 1]?.id } : { sessions };
    },

    async delete(filter: SessionKeyFilter): Promise<number> {
      ensureOpen();
      const match = createKeyFilter(filter);
      requireFilterField(match);
      let deleted = 0;
      for (const { key } of await allSessions()) {
        if (!keyMatches(key, match)) continue;
        const p = paths(key);
        if (await exclusive(key, p, () => removeSession(p))) deleted++;
      }
      return deleted;
    },

    history(key: SessionKey) {
      return new StoreChatMessageHistory(store, createSessionKey(key));
    },

    async lock(key: SessionKey, lockOptions: LockOptions = {}): Promise<TurnLock> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const p = paths(sessionKey);
      await mkdir(p.dir, { recursive: true });
      return lockFile(p.turnLock, sessionKey, lockOptions);
    },

    async prune(): Promise<number> {
      ensureOpen();
      if (ttlMs === undefined) return 0;
      let pruned = 0;
      let shards: string[] = [];
      try {
        shards = await readdir(root);
      } catch {
        return 0;
      }
      for (const shard of shards) {
        const names = await readdir(join(root, shard)).catch(() => [] as string[]);
        for (const name of names.filter((n) => n.endsWith(".jsonl"))) {
          const file = join(root, shard, name);
          const info = await stat(file).catch(() => undefined);
          if (!info || !expired(info.mtimeMs)) continue;
          await Promise.all([unlink(file).catch(() => {}), unlink(file.replace(/\.jsonl$/, ".state.json")).catch(() => {})]);
          known.delete(file);
          pruned++;
        }
      }
      return pruned;
    },

    async close(): Promise<void> {
      closed = true;
      known.clear();
    },
  };
  return store;
}
