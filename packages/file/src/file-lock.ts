import { open, readFile, rename, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { type LockOptions, type SessionKey, type TurnLock, pollForLock } from "@memoria/core";

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

async function readLock(path: string): Promise<LockContent | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as LockContent;
  } catch {
    return undefined; // gone, or being written this instant
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

/**
 * Takes a lock file: created with O_EXCL (only one process can), holding an owner
 * token, an expiry and the holder's process id and host. A lock is stale once
 * expired, or at once when its holder was a process of this machine that has died;
 * a stale lock is renamed aside before it is taken over, so two processes
 * recovering it cannot both win. Released only by its owner.
 */
export async function lockFile(path: string, key: SessionKey, options: LockOptions): Promise<TurnLock> {
  const owner = crypto.randomUUID();
  const ttlMs = Math.max(1, Math.round(options.ttlMs ?? 60_000));
  return pollForLock(key, options, {
    take: () => tryLock(path, owner, ttlMs),
    release: async () => {
      const held = await readLock(path);
      if (held?.owner === owner) await unlink(path).catch(() => {});
    },
  });
}

/** One try at the lock file; a stale lock is recovered for the next try. */
async function tryLock(path: string, owner: string, ttlMs: number): Promise<boolean> {
  try {
    const handle = await open(path, "wx");
    await handle.writeFile(JSON.stringify({ owner, expires: Date.now() + ttlMs, pid: process.pid, host: HOST } satisfies LockContent));
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const held = await readLock(path);
  if (held ? held.expires < Date.now() || holderDied(held) : await emptyAndOld(path)) {
    const aside = `${path}.stale-${owner}`;
    try {
      await rename(path, aside);
      await unlink(aside);
    } catch {
      // another process recovered it first
    }
  }
  return false;
}
