import { unlink, utimes } from "node:fs/promises";
import { resolve } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import {
  type AppendOptions,
  type AppendResult,
  type InfoPage,
  type InfoPatch,
  type JsonValue,
  type ListOptions,
  type LockOptions,
  MemoriaError,
  type ReadOptions,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  type SessionPage,
  type TailReplacement,
  StoreChatMessageHistory,
  StoreClosedError,
  type FencedWriteOptions,
  type TurnLock,
  createKeyFilter,
  createSessionKey,
  keyMatches,
} from "@memoria/core";
import {
  changedUnderEdit,
  checkInfoPatch,
  checkTail,
  cloneJson,
  sessionKeyId,
  encodeMessages,
  toStoredText,
  listedBy,
  listLimit,
  namedValues,
  randomId,
  readWindow,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
  refuseSealed,
  stateEntries,
} from "@memoria/core/store-kit";
import { onDisk } from "./file-errors.js";
import { type FileInfoContext, INFO_ENTRY, fileInfo, fileRecent, patchedInfo } from "./file-conversations.js";
import { lockFile } from "./file-lock.js";
import type { TurnLine } from "./session-file.js";
import { sessionFolder } from "./session-folder.js";
import { rewriteTurns } from "./turn-rewrite.js";
import { expiredFiles, liveSessions } from "./session-directory.js";
import { lastMessages } from "./tail-cache.js";
import type { FileHistoryStore, FileStoreOptions } from "./file-store-options.js";

export type { FileHistoryStore, FileStoreOptions } from "./file-store-options.js";

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
  if (options.frozen !== undefined && typeof options.frozen !== "boolean") throw new MemoriaError("INVALID_ARGUMENT", `frozen must be true or false, got ${String(options.frozen)}.`);
  const folder = sessionFolder(root, { sync, ttlMs, cacheSessions: options.cacheSessions ?? 1_000, frozen: options.frozen ?? true });
  const { ledger, tails, folders, paths, pathsOf, expired, inFolder, checkFence, liveStat, exclusive, replaceFile, readState, removeSession } = folder;
  let closed = false;

  function ensureOpen(): void {
    if (closed) throw new StoreClosedError("file");
  }

  /** Checked state values written together: the state file is replaced whole, once. */
  async function writeState(key: SessionKey, entries: [string, JsonValue][], writeOptions: FencedWriteOptions | undefined): Promise<void> {
    ensureOpen();
    const sessionKey = createSessionKey(key);
    if (entries.length === 0) return;
    const p = paths(sessionKey);
    await onDisk("not-stored", () => exclusive(sessionKey, p, async () => {
      checkFence(sessionKey, p, writeOptions);
      const entry = await ledger.catchUp(p);
      if (entry.offset === 0) await ledger.write(sessionKey, p, entry, ""); // a session with state only: its header
      await replaceFile(p.state, JSON.stringify({ ...(await readState(p)), ...namedValues(entries) }));
      const now = new Date();
      await utimes(p.file, now, now); // a write renews the session's TTL
    }));
  }

  const allSessions = () => liveSessions(root, expired);
  const conversations: FileInfoContext = {
    paths,
    liveStat,
    count: async (p, stats) => (await tails.read(p.file, stats, 1)).at(-1)?.n ?? 0,
    readState,
    allSessions,
  };

  const store: FileHistoryStore = {
    name: "file",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    async read(key: SessionKey, readOptions?: ReadOptions): Promise<BaseMessage[]> {
      ensureOpen();
      const p = pathsOf(sessionKeyId(key));
      const last = readWindow(readOptions);
      if (last === 0) return [];
      const info = liveStat(p.file);
      if (info === undefined) return [];
      const wanted = last ?? Number.POSITIVE_INFINITY;
      // An unchanged file is answered from the cache without a promise of its own.
      const turns = tails.cached(p.file, info, wanted) ?? (await tails.read(p.file, info, wanted));
      return refuseSealed(key, lastMessages(turns, last ?? Number.POSITIVE_INFINITY), readOptions);
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], appendOptions?: AppendOptions): Promise<AppendResult> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const turnId = turnIdOf(appendOptions);
      const encoded = encodeMessages(messages);
      if (encoded.length === 0) return { appended: true };
      const p = paths(sessionKey);
      return onDisk("not-stored", () => exclusive(sessionKey, p, async () => {
        checkFence(sessionKey, p, appendOptions);
        const entry = await ledger.catchUp(p);
        if (entry.turnIds.has(turnId)) return { appended: false };
        const line = `${toStoredText({ t: turnId, n: entry.count + encoded.length, m: encoded } satisfies TurnLine)}\n`;
        const at = entry.offset;
        const turn: TurnLine = { t: turnId, n: entry.count + encoded.length, m: encoded };
        await ledger.write(sessionKey, p, entry, line);
        if (at > 0) tails.appended(p.file, at, entry.offset, turn);
        entry.count += encoded.length;
        entry.turnIds.add(turnId);
        return { appended: true };
      }));
    },

    async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
      ensureOpen();
      const p = paths(createSessionKey(key));
      stateName(name);
      if (liveStat(p.file) === undefined) return undefined;
      const value = (await readState(p))[name];
      return value === undefined ? undefined : cloneJson(value);
    },

    async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
      ensureOpen();
      const p = paths(createSessionKey(key));
      if (liveStat(p.file) === undefined) return {};
      const state = await readState(p);
      return namedValues(Object.keys(state).filter((name) => name !== INFO_ENTRY).sort().map((name) => [name, state[name] as JsonValue]));
    },

    async setState(key: SessionKey, name: string, value: JsonValue, writeOptions?: FencedWriteOptions): Promise<void> {
      return writeState(key, [[stateName(name), stateValue(value)]], writeOptions);
    },

    async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, writeOptions?: FencedWriteOptions): Promise<void> {
      return writeState(key, stateEntries(values), writeOptions);
    },

    async info(key: SessionKey): Promise<SessionInfo | undefined> {
      ensureOpen();
      return fileInfo(conversations, key);
    },

    async setInfo(key: SessionKey, patch: InfoPatch, writeOptions?: FencedWriteOptions): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const checked = checkInfoPatch(patch);
      const p = paths(sessionKey);
      await onDisk("not-stored", () => exclusive(sessionKey, p, async () => {
        checkFence(sessionKey, p, writeOptions);
        const entry = await ledger.catchUp(p);
        if (entry.offset === 0) await ledger.write(sessionKey, p, entry, ""); // a session with info only: its header
        await replaceFile(p.state, JSON.stringify(patchedInfo(await readState(p), checked)));
      }));
    },

    async recent(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<InfoPage> {
      ensureOpen();
      return fileRecent(conversations, filter, listOptions);
    },

    async trim(key: SessionKey, trimOptions: { oldest: number }): Promise<number> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const oldest = trimCount(trimOptions);
      if (oldest === 0) return 0;
      const p = paths(sessionKey);
      return onDisk("not-stored", () => exclusive(sessionKey, p, async () => {
        const entry = await ledger.catchUp(p);
        if (entry.offset === 0) return 0;
        const { lines, removed } = await rewriteTurns(p.file, entry.offset, (first, messages) => messages.slice(Math.max(0, oldest - first)));
        await replaceFile(p.file, `${lines.join("\n")}\n`);
        ledger.forget(p.file);
        tails.forget(p.file);
        return removed;
      }));
    },

    async replaceTail(key: SessionKey, tail: TailReplacement, writeOptions?: FencedWriteOptions): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      checkTail(tail);
      const encoded = encodeMessages(tail.messages);
      const p = paths(sessionKey);
      await onDisk("not-stored", () => exclusive(sessionKey, p, async () => {
        checkFence(sessionKey, p, writeOptions);
        let entry = await ledger.catchUp(p);
        const live = liveStat(p.file) !== undefined;
        const found = live ? entry.count : 0;
        if (found !== tail.count) throw changedUnderEdit(found, tail.count);
        if (!live || entry.offset === 0) {
          // Nothing to replace: the new messages (if any) start the session afresh.
          if (entry.offset > 0) {
            await removeSession(p);
            entry = await ledger.catchUp(p);
          }
          if (encoded.length === 0) return;
          await ledger.write(sessionKey, p, entry, `${toStoredText({ t: randomId("edit."), n: encoded.length, m: encoded } satisfies TurnLine)}\n`);
          entry.count += encoded.length;
          return;
        }
        const { lines } = await rewriteTurns(p.file, entry.offset, (first, messages) => messages.slice(0, Math.max(0, tail.from - first)));
        if (encoded.length > 0) lines.push(toStoredText({ t: randomId("edit."), n: tail.from + encoded.length, m: encoded } satisfies TurnLine));
        await replaceFile(p.file, `${lines.join("\n")}\n`);
        ledger.forget(p.file);
        tails.forget(p.file);
      }));
    },

    async clear(key: SessionKey): Promise<void> {
      ensureOpen();
      const sessionKey = createSessionKey(key);
      const p = paths(sessionKey);
      await onDisk("unknown", () => exclusive(sessionKey, p, () => removeSession(p)));
    },

    async count(key: SessionKey): Promise<number> {
      ensureOpen();
      const p = paths(createSessionKey(key));
      const info = liveStat(p.file);
      return info === undefined ? 0 : conversations.count(p, info);
    },

    async list(filter?: SessionKeyFilter, listOptions?: ListOptions): Promise<SessionPage> {
      ensureOpen();
      const match = createKeyFilter(filter);
      const limit = listLimit(listOptions);
      const cursor = listOptions?.cursor;
      const matching = (await allSessions()).filter(({ key, id }) => listedBy(key, match) && (cursor === undefined || id > cursor));
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
        if (await onDisk("unknown", () => exclusive(key, p, () => removeSession(p)))) deleted++;
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
      // A stale turn lock is broken under the append lock, which fenced writes hold while they check it.
      return onDisk("not-stored", () => inFolder(p, () => lockFile(p.turnLock, sessionKey, lockOptions, (body) => exclusive(sessionKey, p, body).then(() => true))));
    },

    async prune(): Promise<number> {
      ensureOpen();
      if (ttlMs === undefined) return 0;
      const files = await expiredFiles(root, expired);
      for (const file of files) {
        await Promise.all([unlink(file).catch(() => {}), unlink(file.replace(/\.jsonl$/, ".state.json")).catch(() => {})]);
        ledger.forget(file);
        tails.forget(file);
      }
      return files.length;
    },

    async close(): Promise<void> {
      closed = true;
      ledger.clear();
      tails.clear();
      folders.clear();
    },
  };
  return store;
}
