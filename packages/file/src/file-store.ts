import { unlink, utimes } from "node:fs/promises";
import { resolve } from "node:path";
import type { JsonValue, SessionKeyFilter } from "@memoria/core";
import { type EngineSession, MemoriaError, type StoreEngine, defineStore, keyMatches, randomId } from "@memoria/core/store-kit";
import { onDisk } from "./file-errors.js";
import { type FileInfoContext, INFO_ENTRY, fileInfo, fileRecent, patchedInfo } from "./file-conversations.js";
import { lockFileCalls } from "./file-lock.js";
import type { TurnLine } from "./session-file.js";
import { sessionFolder } from "./session-folder.js";
import { rewriteTurns } from "./turn-rewrite.js";
import { expiredFiles, liveSessions } from "./session-directory.js";
import { lastMessages } from "./tail-cache.js";
import type { FileHistoryStore, FileStoreOptions } from "./file-store-options.js";

export type { FileHistoryStore, FileStoreOptions } from "./file-store-options.js";

/** A turn's line from its messages' stored texts: the id and running count first, as `turnHead` reads them. */
function turnLine(turnId: string, count: number, payloads: readonly string[]): string {
  return `{"t":${JSON.stringify(turnId)},"n":${count},"m":[${payloads.join(",")}]}\n`;
}

/**
 * A history store in files: one append-only JSONL file per session, named by the
 * SHA-256 of the encoded session key (so ids never touch a path). The first line
 * holds the key; each further line is one turn (its id, the running message count,
 * its messages), written with one `write`. Derived state sits beside it in a JSON
 * file replaced atomically. The engine below takes strings and hands out the
 * decoded messages it caches; `defineStore` does the rest.
 */
export function createFileStore(options: FileStoreOptions): FileHistoryStore {
  if (typeof options?.directory !== "string" || options.directory === "") {
    throw new MemoriaError("INVALID_ARGUMENT", "createFileStore needs a `directory`.");
  }
  const root = resolve(options.directory);
  const sync = (options.fsync ?? "always") === "always";
  const ttlMs = options.ttlSeconds === undefined ? undefined : options.ttlSeconds * 1000;
  if (ttlMs !== undefined && !(ttlMs > 0)) throw new MemoriaError("INVALID_ARGUMENT", `ttlSeconds must be > 0, got ${options.ttlSeconds}.`);
  if (options.frozen !== undefined && typeof options.frozen !== "boolean")
    throw new MemoriaError("INVALID_ARGUMENT", `frozen must be true or false, got ${String(options.frozen)}.`);
  const folder = sessionFolder(root, { sync, ttlMs, cacheSessions: options.cacheSessions ?? 1_000, frozen: options.frozen ?? true });
  const { ledger, tails, folders, pathsOf, expired, inFolder, checkFence, liveStat, exclusive, replaceFile, readState, removeSession } = folder;

  /** State values (name and JSON text) written together: the state file is replaced whole, once. */
  async function writeState({ key, id }: EngineSession, entries: readonly (readonly [string, string])[], token: string | undefined): Promise<void> {
    const p = pathsOf(id);
    await onDisk("not-stored", () =>
      exclusive(key, p, async () => {
        checkFence(key, p, token);
        const entry = await ledger.catchUp(p);
        if (entry.offset === 0) await ledger.write(key, p, entry, ""); // a session with state only: its header
        const values = Object.fromEntries(entries.map(([name, json]) => [name, JSON.parse(json) as JsonValue]));
        await replaceFile(p.state, JSON.stringify({ ...(await readState(p)), ...values }));
        const now = new Date();
        await utimes(p.file, now, now); // a write renews the session's TTL
      }),
    );
  }

  /** The session's turns holding its last `last` messages (all when undefined), from the cache where it is current. */
  async function turnsOf(id: string, last: number | undefined): Promise<{ turns: readonly TurnLine[]; wanted: number }> {
    const p = pathsOf(id);
    const info = liveStat(p.file);
    if (info === undefined) return { turns: [], wanted: 0 };
    const wanted = last ?? Number.POSITIVE_INFINITY;
    // An unchanged file is answered from the cache without a promise of its own.
    return { turns: tails.cached(p.file, info, wanted) ?? (await tails.read(p.file, info, wanted)), wanted };
  }

  const allSessions = () => liveSessions(root, expired);
  const conversations: FileInfoContext = {
    pathsOf,
    liveStat,
    count: async (p, stats) => (await tails.read(p.file, stats, 1)).at(-1)?.n ?? 0,
    readState,
    allSessions,
  };

  const engine: StoreEngine = {
    name: "file",
    capabilities: { ttl: true, crossProcessLock: true, sharedBackend: true },

    async readMessages({ id }, last) {
      const { turns, wanted } = await turnsOf(id, last);
      return lastMessages(turns, wanted);
    },

    async append({ key, id }, payloads, turn) {
      const p = pathsOf(id);
      return onDisk("not-stored", () =>
        exclusive(key, p, async () => {
          checkFence(key, p, turn.fence);
          const entry = await ledger.catchUp(p);
          if (entry.turnIds.has(turn.turnId)) return { appended: false };
          const count = entry.count + payloads.length;
          const { at, created } = await ledger.write(key, p, entry, turnLine(turn.turnId, count, payloads));
          const line: TurnLine = { t: turn.turnId, n: count, m: payloads.map((text) => JSON.parse(text)) };
          if (created) tails.created(p.file, created, at, line);
          else tails.appended(p.file, at, entry.offset, line);
          entry.count = count;
          entry.turnIds.add(turn.turnId);
          return { appended: true };
        }),
      );
    },

    async getState({ id }, name) {
      const p = pathsOf(id);
      if (liveStat(p.file) === undefined) return undefined;
      const value = (await readState(p))[name];
      return value === undefined ? undefined : JSON.stringify(value);
    },

    async getAllState({ id }) {
      const p = pathsOf(id);
      if (liveStat(p.file) === undefined) return [];
      return Object.entries(await readState(p)).flatMap(([name, value]) => (name === INFO_ENTRY ? [] : [[name, JSON.stringify(value)] as const]));
    },

    setState: (session, name, json, fence) => writeState(session, [[name, json]], fence),
    setStates: (session, values, fence) => writeState(session, values, fence),

    info: (session) => fileInfo(conversations, session),

    async setInfo({ key, id }, patch, fence) {
      const p = pathsOf(id);
      await onDisk("not-stored", () =>
        exclusive(key, p, async () => {
          checkFence(key, p, fence);
          const entry = await ledger.catchUp(p);
          if (entry.offset === 0) await ledger.write(key, p, entry, ""); // a session with info only: its header
          await replaceFile(p.state, JSON.stringify(patchedInfo(await readState(p), patch)));
          if (patch.lastActiveAt !== undefined) await utimes(p.file, new Date(), new Date(patch.lastActiveAt)); // activity is the file's time
        }),
      );
    },

    recent: (match, page) => fileRecent(conversations, match, page),

    async trim({ key, id }, oldest) {
      const p = pathsOf(id);
      return onDisk("not-stored", () =>
        exclusive(key, p, async () => {
          const entry = await ledger.catchUp(p);
          if (entry.offset === 0) return 0;
          const { lines, removed } = await rewriteTurns(p.file, entry.offset, (first, messages) => messages.slice(Math.max(0, oldest - first)));
          await replaceFile(p.file, `${lines.join("\n")}\n`);
          ledger.forget(p.file);
          tails.forget(p.file);
          return removed;
        }),
      );
    },

    async replaceTail({ key, id }, tail, fence) {
      const p = pathsOf(id);
      return onDisk("not-stored", () =>
        exclusive(key, p, async () => {
          checkFence(key, p, fence);
          let entry = await ledger.catchUp(p);
          const live = liveStat(p.file) !== undefined;
          const found = live ? entry.count : 0;
          if (found !== tail.count) return found;
          const editId = randomId("edit.");
          if (!live || entry.offset === 0) {
            // Nothing to replace: the new messages (if any) start the session afresh.
            if (entry.offset > 0) {
              await removeSession(p);
              entry = await ledger.catchUp(p);
            }
            if (tail.payloads.length === 0) return found;
            await ledger.write(key, p, entry, turnLine(editId, tail.payloads.length, tail.payloads));
            entry.count += tail.payloads.length;
            entry.turnIds.add(editId);
            return found;
          }
          const { lines } = await rewriteTurns(p.file, entry.offset, (first, messages) => messages.slice(0, Math.max(0, tail.from - first)));
          if (tail.payloads.length > 0) lines.push(turnLine(editId, tail.from + tail.payloads.length, tail.payloads).trimEnd());
          await replaceFile(p.file, `${lines.join("\n")}\n`);
          ledger.forget(p.file);
          tails.forget(p.file);
          return found;
        }),
      );
    },

    async clear({ key, id }) {
      const p = pathsOf(id);
      await onDisk("unknown", () => exclusive(key, p, () => removeSession(p)));
    },

    async count({ id }) {
      const p = pathsOf(id);
      const info = liveStat(p.file);
      return info === undefined ? 0 : conversations.count(p, info);
    },

    async list(match, { after, limit }) {
      const matching = (await allSessions()).filter(({ key, id }) => keyMatches(key, match) && (after === undefined || id > after));
      return matching.slice(0, limit).map(({ key, id }) => ({ key, id }));
    },

    async delete(match: SessionKeyFilter) {
      let deleted = 0;
      for (const { key, id } of await allSessions()) {
        if (!keyMatches(key, match)) continue;
        const p = pathsOf(id);
        if (await onDisk("unknown", () => exclusive(key, p, () => removeSession(p)))) deleted++;
      }
      return deleted;
    },

    lock({ key, id }, owner, ttlMs) {
      const p = pathsOf(id);
      // A stale turn lock is broken under the append lock, which fenced writes hold while they check it.
      const calls = lockFileCalls(p.turnLock, owner, ttlMs, (body) => exclusive(key, p, body).then(() => true));
      return {
        take: () => onDisk("not-stored", () => inFolder(p, calls.take)),
        renew: calls.renew,
        release: calls.release,
      };
    },

    async prune() {
      if (ttlMs === undefined) return 0;
      const files = await expiredFiles(root, expired);
      for (const file of files) {
        await Promise.all([unlink(file).catch(() => {}), unlink(file.replace(/\.jsonl$/, ".state.json")).catch(() => {})]);
        ledger.forget(file);
        tails.forget(file);
      }
      return files.length;
    },

    async close() {
      ledger.clear();
      tails.clear();
      folders.clear();
    },
  };

  return defineStore(engine);
}
