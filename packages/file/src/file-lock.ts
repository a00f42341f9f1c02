import { closeSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from "node:fs";
import { open, rename, stat, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import type { LockOptions, SessionKey, TurnLock } from "@memoria/core";
import { lockTimes, pollForLock } from "@memoria/core/store-kit";
import { fileError } from "./file-errors.js";

interface LockContent {
  owner: string;
  expires: number;
  pid: number;
  host: string;
}

const HOST = hostname();

/** True when the lock's holder is a process of this machine that no longer runs. */
function holderDied(lock: LockContent): boolean {
  if (lock.host !== HOST || !Number.isInteger(lock.pid)) return false;
  try {
    process.kill(lock.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** A lock file's content fits in this many bytes (an owner id, a pid, an expiry); a longer file is read whole. */
const LOCK_BYTES = 1024;
const lockBuffer = Buffer.allocUnsafe(LOCK_BYTES);

/**
 * The lock's content, or undefined when it is gone or being written this instant.
 * Read synchronously, as the store's `stat`s are: a lock file is a few dozen bytes,
 * which a local disk gives in microseconds, while `readFile` through libuv's thread
 * pool (open, fstat, read, close: four hops) took about 190 µs here, three times a
 * turn. One `read` into a buffer kept for it, not `readFileSync` (which reads again
 * to find the end): 6 µs a read here instead of 9.
 */
export function readLock(path: string): LockContent | undefined {
  try {
    const fd = openSync(path, "r");
    let length: number;
    try {
      length = readSync(fd, lockBuffer, 0, LOCK_BYTES, 0);
    } finally {
      closeSync(fd);
    }
    const text = length < LOCK_BYTES ? lockBuffer.toString("utf8", 0, length) : readFileSync(path, "utf8");
    return JSON.parse(text) as LockContent;
  } catch {
    return undefined;
  }
}

/** Removes a lock file this process holds (synchronously, as it is read); gone already is fine. */
export function removeLock(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already, or the directory with it: the lock is free either way
  }
}

/** How long an unreadable lock file may be in the making before it counts as abandoned. */
const WRITE_GRACE_MS = 2_000;

/** A lock file with no readable content, older than the grace: its creator died between creating and writing it. */
async function emptyAndOld(path: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs > WRITE_GRACE_MS;
  } catch {
    return false; // gone already
  }
}

/** Whether the lock at `path` may be taken over: its content (or "unreadable"), judged stale. */
async function staleContent(path: string): Promise<LockContent | "unreadable" | undefined> {
  const held = readLock(path);
  if (held) return held.expires < Date.now() || holderDied(held) ? held : undefined;
  return (await emptyAndOld(path)) ? "unreadable" : undefined;
}

/**
 * Runs `body` while holding the `<path>` breaker: a file created exclusively,
 * taken over only when its creator's process is gone or it is older than the
 * grace. Returns false, without running `body`, when someone else holds it.
 */
export async function withBreaker(path: string, body: () => Promise<void>): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw fileError(error, "not-stored");
    if (await staleContent(path)) await unlink(path).catch(() => {});
    return false;
  }
  try {
    await handle.writeFile(JSON.stringify({ owner: "breaker", expires: Date.now() + WRITE_GRACE_MS, pid: process.pid, host: HOST }));
    await body();
    return true;
  } finally {
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
  }
}

/**
 * How a stale lock is broken. The check that it is stale and its removal must
 * happen under a guard that writers fenced by this lock also hold, so that no
 * writer can check the lock, lose it, and write after the new holder has read.
 */
export type BreakGuard = (body: () => Promise<void>) => Promise<boolean>;

/** Removes the lock if it is still the stale one judged before (same owner), under `guard`. */
async function breakStale(path: string, judged: LockContent | "unreadable", guard: BreakGuard): Promise<void> {
  await guard(async () => {
    const now = await staleContent(path);
    const same = now === "unreadable" ? judged === "unreadable" : now !== undefined && judged !== "unreadable" && now.owner === judged.owner;
    if (same) await unlink(path).catch(() => {});
  });
}

/**
 * A lock file's calls: created with O_EXCL (only one process can), holding an owner
 * token, an expiry and the holder's process id and host, and renewed by rewriting
 * the expiry while held. A lock is stale once expired, or at once when its holder
 * was a process of this machine that has died. A stale lock is removed only under
 * `guard`, after checking that it is still the same stale lock, so two processes
 * recovering it cannot both win (a rename aside could take a fresh lock that
 * replaced the stale one). Released only by its owner, after any renewal in
 * flight: a renewal's rename landing after the release would put the lock back.
 * The poller (core's `pollForLock`, or the store kit's lock) tries, renews and releases.
 */
export function lockFileCalls(path: string, owner: string, ttlMs: number, guard: BreakGuard = (body) => withBreaker(`${path}.break`, body)) {
  const content = () => JSON.stringify({ owner, expires: Date.now() + ttlMs, pid: process.pid, host: HOST } satisfies LockContent);
  let renewal: Promise<boolean> | undefined;
  let released = false;
  const renewOnce = async (): Promise<boolean> => {
    if (released || readLock(path)?.owner !== owner) return false;
    // Replaced whole (a rename), never rewritten in place: a fenced write reading it meanwhile must see an owner.
    const temporary = `${path}.${owner}.renew`;
    try {
      await writeFile(temporary, content(), { mode: 0o600 });
      await rename(temporary, path);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
    return true;
  };
  return {
    take: async () => {
      if (create(path, content())) return true;
      if (readLock(path)?.owner === owner) return true; // a try of ours that was applied
      const stale = await staleContent(path);
      if (stale) await breakStale(path, stale, guard);
      return false;
    },
    renew: () => {
      renewal = renewOnce();
      return renewal;
    },
    release: async () => {
      released = true;
      await renewal?.catch(() => false);
      if (readLock(path)?.owner === owner) removeLock(path);
    },
  };
}

/** Takes a lock file (see `lockFileCalls`), waiting for it as `options` say. */
export async function lockFile(path: string, key: SessionKey, options: LockOptions, guard?: BreakGuard): Promise<TurnLock> {
  const owner = crypto.randomUUID();
  return pollForLock(key, options, { owner, ...lockFileCalls(path, owner, lockTimes(options).ttlMs, guard) });
}

/**
 * Creates the lock file with its content; false when it exists. A failed write leaves
 * no empty lock behind. Synchronous, as the lock is read and removed: creating a file
 * of a few dozen bytes (no fsync) takes microseconds, where open, write and close
 * through libuv's thread pool were three hops, about 200 µs of a turn here (and the
 * turn takes two such locks: its own, and the append lock around its write).
 */
function create(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw fileError(error, "not-stored");
  }
  let failure: unknown;
  try {
    const bytes = Buffer.from(content);
    if (writeSync(fd, bytes) !== bytes.length) failure = Object.assign(new Error("no space left for the lock file"), { code: "ENOSPC" });
  } catch (error) {
    failure = error;
  }
  try {
    closeSync(fd); // once: a descriptor closed twice may by then be another file's
  } catch (error) {
    failure ??= error;
  }
  if (failure === undefined) return true;
  removeLock(path);
  throw fileError(failure, "not-stored");
}
