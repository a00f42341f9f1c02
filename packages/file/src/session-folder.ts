import { createHash } from "node:crypto";
import { type Stats, statSync } from "node:fs";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type JsonValue, LockLostError, type SessionKey, encodeSessionKey } from "@memoria/core";
import { decodeFrozenMessage } from "@memoria/core/store-kit";
import { lockFile, readLock } from "./file-lock.js";
import { Ledger, type Paths } from "./session-ledger.js";
import { TailCache } from "./tail-cache.js";

/** How a folder keeps its files and what it caches of them. */
export interface FolderSettings {
  /** fsync each write. */
  sync: boolean;
  ttlMs: number | undefined;
  /** Sessions whose bookkeeping, paths and tails are kept. */
  cacheSessions: number;
  /** Cached turns hold frozen messages that every read shares. */
  frozen: boolean;
}

/**
 * Bytes of turn lines cached per session file, and over all files (decoded and
 * frozen, about 2.4 bytes of heap per byte: `pnpm --filter @memoria/bench file-cache`).
 * 8 MiB keeps a whole session of about 30,000 chat-length messages; at 256 KiB, whole
 * reads of sessions past about 1,000 re-read and re-parsed the file every time.
 */
const TAIL_BYTES_PER_FILE = 8 * 1024 * 1024;
const TAIL_BYTES = 64 * 1024 * 1024;

/**
 * The files of a store's sessions under `root`: where each lives, the append lock
 * every write takes, atomic replacement, and the caches (bookkeeping and tails)
 * kept of them. The store (file-store.ts) says what each call does with them.
 */
export function sessionFolder(root: string, settings: FolderSettings) {
  const { sync, ttlMs, cacheSessions } = settings;
  const ledger = new Ledger(cacheSessions, expired, sync);
  const tails = new TailCache({
    files: cacheSessions,
    bytesPerFile: TAIL_BYTES_PER_FILE,
    bytes: TAIL_BYTES,
    share: settings.frozen ? decodeFrozenMessage : undefined,
  });

  /** Recent sessions' paths by encoded key: a read then hashes nothing (bounded like the other caches). */
  const known = new Map<string, Paths>();

  /** The files of the session whose encoded key is `id`. */
  function pathsOf(id: string): Paths {
    let found = known.get(id);
    if (found === undefined) {
      const hash = createHash("sha256").update(id).digest("hex");
      const dir = join(root, hash.slice(0, 2));
      const base = join(dir, hash);
      found = { dir, file: `${base}.jsonl`, state: `${base}.state.json`, appendLock: `${base}.append.lock`, turnLock: `${base}.turn.lock` };
      if (known.size >= cacheSessions) known.delete(known.keys().next().value as string);
      known.set(id, found);
    }
    return found;
  }

  function paths(key: SessionKey): Paths {
    return pathsOf(encodeSessionKey(key));
  }

  function expired(mtimeMs: number): boolean {
    return ttlMs !== undefined && mtimeMs + ttlMs <= Date.now();
  }

  /** Folders this store made or found, so a write does not ask for them again. */
  const folders = new Set<string>();

  /** The session's folder, private to its owner. */
  async function makeDir(p: Paths): Promise<void> {
    if (folders.has(p.dir)) return;
    await mkdir(root, { recursive: true, mode: 0o700 });
    await mkdir(p.dir, { recursive: true, mode: 0o700 });
    folders.add(p.dir);
  }

  /** Runs `body` in the session's folder, making it again (once) if it was removed under this store. */
  async function inFolder<T>(p: Paths, body: () => Promise<T>): Promise<T> {
    await makeDir(p);
    try {
      return await body();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      folders.delete(p.dir);
      await makeDir(p);
      return body();
    }
  }

  /** Throws `LockLostError` unless the write's turn lock (its `token`, if any) is still the session's (checked under the append lock). */
  function checkFence(key: SessionKey, p: Paths, token: string | undefined): void {
    if (token !== undefined && readLock(p.turnLock)?.owner !== token) throw new LockLostError(key);
  }

  /** The file's size, or undefined when it is missing or expired. */
  /**
   * The file's metadata, or undefined when it is missing or expired. A synchronous
   * `stat`: a metadata call on a local disk takes microseconds, while a round trip
   * through libuv's thread pool costs more than the rest of a small cached read.
   */
  function liveStat(file: string): Stats | undefined {
    const info = statSync(file, { throwIfNoEntry: false });
    return info === undefined || expired(info.mtimeMs) ? undefined : info;
  }

  /**
   * Runs `body` holding the session's append lock (short; across processes). Every
   * write, every erasure and every takeover of a stale turn lock happens under it,
   * so a fenced write's check and the write itself are one step.
   */
  async function exclusive<T>(key: SessionKey, p: Paths, body: () => Promise<T>): Promise<T> {
    const lock = await inFolder(p, () => lockFile(p.appendLock, key, { waitMs: 60_000 }));
    try {
      return await body();
    } finally {
      await lock.release();
    }
  }

  /** Replaces a file atomically (a private temporary file, renamed over it); a failed write leaves no temporary behind. */
  async function replaceFile(path: string, text: string): Promise<void> {
    const temporary = `${path}.${crypto.randomUUID()}.tmp`;
    try {
      await writeFile(temporary, text, { flush: sync, mode: 0o600 });
      await rename(temporary, path);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
  }

  async function readState(p: Paths): Promise<Record<string, JsonValue>> {
    try {
      return JSON.parse(await readFile(p.state, "utf8")) as Record<string, JsonValue>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
  }

  /** Removes the session's files and its turn lock, so a turn in flight can no longer save into it. */
  async function removeSession(p: Paths): Promise<boolean> {
    ledger.forget(p.file);
    tails.forget(p.file);
    await unlink(p.turnLock).catch(() => {});
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

  return { ledger, tails, folders, paths, pathsOf, expired, makeDir, inFolder, checkFence, liveStat, exclusive, replaceFile, readState, removeSession };
}
