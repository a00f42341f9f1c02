import { type Stats, closeSync, fstatSync, fsync, ftruncateSync, futimesSync, openSync, statSync, write, writeSync } from "node:fs";
import { truncate, unlink } from "node:fs/promises";
import { promisify } from "node:util";
import type { SessionKey } from "@memoria/core";
import { fileError } from "./file-errors.js";
import { type Header, forEachLine, openRange, turnHead } from "./session-file.js";

/** What this process knows of a session's file (by inode), valid up to `offset` bytes. */
export interface Known {
  ino: number;
  offset: number;
  count: number;
  turnIds: Set<string>;
}

/** The files of one session. */
export interface Paths {
  dir: string;
  file: string;
  state: string;
  appendLock: string;
  turnLock: string;
}

/**
 * This process's bookkeeping of session files (message count, turn ids), brought
 * up to date under the session's append lock by reading only what was appended
 * since, and the one place that appends to a file.
 */
export class Ledger {
  readonly #known = new Map<string, Known>();

  constructor(
    private readonly cacheLimit: number,
    private readonly expired: (mtimeMs: number) => boolean,
    private readonly sync: boolean,
  ) {}

  forget(file: string): void {
    this.#known.delete(file);
  }

  clear(): void {
    this.#known.clear();
  }

  /** Parses what was appended since this process last looked; truncates a torn last line. */
  async catchUp(p: Paths): Promise<Known> {
    // Synchronous, as the store's other stats: microseconds, where a hop through the thread pool took about 65 µs.
    const info = statSync(p.file, { throwIfNoEntry: false });
    if (!info || this.expired(info.mtimeMs)) {
      await Promise.all([unlink(p.file).catch(() => {}), unlink(p.state).catch(() => {})]); // missing or expired: start afresh
      this.#known.delete(p.file);
      return { ino: 0, offset: 0, count: 0, turnIds: new Set() };
    }
    let entry = this.#known.get(p.file);
    // A file replaced by a compaction (a new inode) or cut shorter is read again from its start.
    if (!entry || entry.ino !== info.ino || entry.offset > info.size) entry = { ino: info.ino, offset: 0, count: 0, turnIds: new Set() };
    if (info.size > entry.offset) {
      const known = entry;
      const handle = await openRange(p.file, info.size - known.offset);
      if (!handle) throw Object.assign(new Error(`${p.file} was removed under the session's append lock`), { code: "ENOENT" });
      try {
        const complete = await forEachLine(handle, known.offset, info.size, (line) => {
          const head = turnHead(line, p.file);
          if (!head) return;
          known.turnIds.add(head.t);
          known.count = head.n;
        });
        // A write that never finished (the writer was killed, the disk filled): cut it off.
        if (complete < info.size) await truncate(p.file, complete);
        known.offset = complete;
      } finally {
        await handle.close();
      }
    }
    this.#remember(p.file, entry);
    return entry;
  }

  /** Keeps `entry` as the most recently used, dropping the least recently used past the limit. */
  #remember(file: string, entry: Known): void {
    this.#known.delete(file);
    this.#known.set(file, entry);
    while (this.#known.size > this.cacheLimit) this.#known.delete(this.#known.keys().next().value as string);
  }

  /**
   * Appends `text` in one write, creating the file (owner-only) with its header
   * first if needed. A short or failed write is cut back off, so the file never
   * keeps part of a turn that was reported as failed. The file is opened and closed
   * synchronously, and a turn-sized text written so (microseconds, into the page
   * cache); only the fsync, which waits for the disk, and a large write go through
   * libuv's thread pool, where each call was a hop of about 65 µs here. A file this
   * write began is known from then on, as one brought up to date by `catchUp` is:
   * the session's next write reads nothing back.
   */
  async write(key: SessionKey, p: Paths, entry: Known, text: string): Promise<Written> {
    const header = entry.offset === 0 ? `${JSON.stringify({ memoria: 1, key, created: Date.now() } satisfies Header)}\n` : "";
    const bytes = Buffer.from(header + text);
    const at = entry.offset + Buffer.byteLength(header);
    let created: Stats | undefined;
    const fd = openSync(p.file, "a", 0o600);
    try {
      const written = bytes.length <= SYNC_WRITE_BYTES ? writeSync(fd, bytes) : await writeAsync(fd, bytes);
      if (written !== bytes.length) throw Object.assign(new Error(`no space left: wrote ${written} of ${bytes.length} bytes`), { code: "ENOSPC" });
      // The file's modification time is the session's last activity (and its TTL's start), set
      // here from this clock, as a state write's is: the kernel's, after such a write, did not
      // always move on a later append (16% of appends 5 ms apart on Linux 6.18).
      const now = new Date();
      futimesSync(fd, now, now);
      if (this.sync) await fsyncAsync(fd);
      if (header !== "") created = fstatSync(fd);
    } catch (error) {
      let cut = true;
      try {
        ftruncateSync(fd, entry.offset);
      } catch {
        cut = false;
      }
      this.#known.delete(p.file);
      throw fileError(error, cut ? "not-stored" : "unknown");
    } finally {
      closeSync(fd);
    }
    entry.offset += bytes.length;
    if (created) {
      entry.ino = created.ino;
      this.#remember(p.file, entry);
    }
    return { at, created };
  }
}

/** Where a write's text begins in the file, and the file's stats when that write began it (header and text, nothing else). */
export interface Written {
  at: number;
  created?: Stats;
}

/** Writes up to this size are made synchronously (see `Ledger.write`). */
const SYNC_WRITE_BYTES = 64 * 1024;
const writeAsync = promisify((fd: number, bytes: Buffer, done: (error: Error | null, written: number) => void) =>
  write(fd, bytes, 0, bytes.length, null, done),
);
const fsyncAsync = promisify(fsync);
