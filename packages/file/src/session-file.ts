import { closeSync, openSync, readSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { MemoriaError } from "@memoria/core";

/** The first line of a session's file. */
export interface Header {
  memoria: 1;
  key: Record<string, string>;
  /** When the session was created (epoch ms); files from before conversation info lack it. */
  created?: number;
}

/** One turn: its id, the session's message count after it, its messages (codec form). */
export interface TurnLine {
  t: string;
  n: number;
  m: unknown[];
}

/** The first chunk read from the end; each further one doubles, up to MAX_CHUNK. */
const FIRST_CHUNK = 4 * 1024;
const MAX_CHUNK = 256 * 1024;

/** Parses the complete lines of `text`; the part after the last newline is a torn or unfinished write. */
export function completeLines(text: string): { lines: string[]; rest: string } {
  const end = text.lastIndexOf("\n");
  if (end < 0) return { lines: [], rest: text };
  return { lines: text.slice(0, end).split("\n").filter(Boolean), rest: text.slice(end + 1) };
}

export function parseLine(line: string, path: string): Header | TurnLine {
  try {
    return JSON.parse(line) as Header | TurnLine;
  } catch {
    throw new MemoriaError("CORRUPT_DATA", `A complete line of ${path} is not JSON; the file was changed by something other than memoria.`);
  }
}

export function isTurn(record: Header | TurnLine): record is TurnLine {
  return (record as TurnLine).t !== undefined;
}

/** Turn lines read from a file: a run of complete lines, ending at byte `end`. */
export interface TurnRun {
  turns: TurnLine[];
  /** The bytes of each turn's line (its newline included), in the same order. */
  sizes: number[];
  /** The offset just past the last complete line; what follows is a torn or unfinished write. */
  end: number;
  /** True when the run reaches back to the file's start (no turn before it). */
  whole: boolean;
}

/**
 * The complete turn lines at the end of an open file, newest last, read backwards
 * in growing chunks (4 KiB, doubling) until they hold `wanted` messages (or the
 * file's start). A torn last line is left out. Cost: the tail, not the file.
 *
 * Each pass decodes only whole lines (from just after a newline up to a newline),
 * so a line or a UTF-8 character split across chunks is never cut; the partial
 * first line of a pass is carried back to the next, earlier chunk.
 */
export async function tailTurns(handle: RangeReader, size: number, wanted: number, path: string): Promise<TurnRun> {
  const turns: TurnLine[] = []; // newest first while reading back; reversed at the end
  const sizes: number[] = [];
  let messages = 0;
  let position = size;
  let end = size;
  let carried = Buffer.alloc(0);
  let trimmed = false;
  let chunkSize = FIRST_CHUNK;
  while (position > 0 && messages < wanted) {
    const length = Math.min(chunkSize, position);
    chunkSize = Math.min(chunkSize * 2, MAX_CHUNK);
    position -= length;
    const chunk = Buffer.alloc(length);
    await handle.read(chunk, 0, length, position);
    let buffer = carried.length ? Buffer.concat([chunk, carried]) : chunk;
    if (!trimmed) {
      const lastNewline = buffer.lastIndexOf(10);
      if (lastNewline < 0) {
        carried = buffer; // all torn so far: keep reading back
        continue;
      }
      end = position + lastNewline + 1;
      buffer = buffer.subarray(0, lastNewline + 1); // drop the torn tail
      trimmed = true;
    }
    // Before the first newline may sit the end of a line that starts earlier.
    const start = position > 0 ? buffer.indexOf(10) + 1 : 0;
    carried = buffer.subarray(0, start);
    const lines = buffer.subarray(start).toString("utf8").split("\n").filter(Boolean);
    for (let i = lines.length - 1; i >= 0 && messages < wanted; i--) {
      const line = lines[i] as string;
      const record = parseLine(line, path);
      if (!isTurn(record)) continue;
      turns.push(record);
      sizes.push(Buffer.byteLength(line) + 1);
      messages += record.m.length;
    }
  }
  return { turns: turns.reverse(), sizes: sizes.reverse(), end: trimmed ? end : 0, whole: messages < wanted };
}

/** The complete turn lines of a file from byte `from` on, read forwards. */
export async function turnsFrom(handle: RangeReader, from: number, size: number, path: string): Promise<TurnRun> {
  const turns: TurnLine[] = [];
  const sizes: number[] = [];
  const end = await forEachLine(handle, from, size, (line) => {
    const record = parseLine(line.toString("utf8"), path);
    if (!isTurn(record)) return;
    turns.push(record);
    sizes.push(line.length + 1);
  });
  return { turns, sizes, end, whole: from === 0 };
}

export async function openIfExists(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** What reading a file's lines needs of an open file: a `FileHandle`, or a descriptor read synchronously. */
export interface RangeReader {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

/** Ranges up to this size are read with synchronous calls (see `openRange`), as writes up to it are made. */
export const SYNC_READ_BYTES = 64 * 1024;

/**
 * Opens `path` to read at most `bytes` of it; undefined when it is missing. A small
 * range (what another process appended since, a young session's whole file) is read
 * with synchronous calls, microseconds from the page cache, where open, read and
 * close through libuv's thread pool were three hops of about 65 µs each here; a
 * larger one goes through the pool, so a long read never holds the event loop.
 */
export async function openRange(path: string, bytes: number): Promise<RangeReader | undefined> {
  if (bytes > SYNC_READ_BYTES) return openIfExists(path);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return {
    read: async (buffer, offset, length, position) => ({ bytesRead: readSync(fd, buffer, offset, length, position) }),
    close: async () => closeSync(fd),
  };
}

/** How much of a file `forEachLine` reads at once. */
export const LINE_CHUNK = 8 * 1024 * 1024;

/**
 * Calls `onLine` with each complete line (without its newline) from byte `from` up
 * to `to`, reading `chunk` bytes at a time, so a file of any size is never held as
 * one string. Returns the offset just past the last complete line; what follows it
 * is a torn or unfinished write.
 */
export async function forEachLine(
  handle: RangeReader,
  from: number,
  to: number,
  onLine: (line: Buffer) => void | Promise<void>,
  chunk = LINE_CHUNK,
): Promise<number> {
  let position = from;
  let carried = Buffer.alloc(0);
  let complete = from;
  while (position < to) {
    const length = Math.min(chunk, to - position);
    const read = Buffer.alloc(length);
    const { bytesRead } = await handle.read(read, 0, length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const buffer = carried.length ? Buffer.concat([carried, read.subarray(0, bytesRead)]) : read.subarray(0, bytesRead);
    let start = 0;
    for (let end = buffer.indexOf(10); end >= 0; end = buffer.indexOf(10, start)) {
      if (end > start) await onLine(buffer.subarray(start, end));
      start = end + 1;
    }
    complete = position - (buffer.length - start);
    carried = Buffer.from(buffer.subarray(start));
  }
  return complete;
}

/**
 * The id and running count of a turn line, read from its start without parsing
 * its messages (memoria writes `t` and `n` before `m`, and `,"m":` cannot occur
 * inside the JSON string before it); undefined for the header line.
 */
export function turnHead(line: Buffer, path: string): { t: string; n: number } | undefined {
  const end = line.indexOf(',"m":');
  if (end < 0) {
    const record = parseLine(line.toString("utf8"), path);
    return isTurn(record) ? record : undefined;
  }
  const head = parseLine(`${line.toString("utf8", 0, end)}}`, path) as Partial<TurnLine>;
  if (typeof head.t !== "string" || typeof head.n !== "number") {
    throw new MemoriaError("CORRUPT_DATA", `A line of ${path} is not a turn; the file was changed by something other than memoria.`);
  }
  return { t: head.t, n: head.n };
}
