import type { Stats } from "node:fs";
import type { BaseMessage } from "@langchain/core/messages";
import { decodeMessage } from "@memoria/core";
import { type TurnLine, type TurnRun, openIfExists, tailTurns, turnsFrom } from "./session-file.js";

/** The turns this process last read at the end of one file, and which file that was. */
interface Tail extends TurnRun {
  /** Inode and birth time: a file erased and created again (even on the same inode) is another file. */
  identity: string;
  messages: number;
  bytes: number;
}

export interface TailCacheLimits {
  /** Files whose tail is kept (least recently read dropped first). */
  files: number;
  /** Bytes of turn lines kept per file: a longer whole read is not cached. */
  bytesPerFile: number;
}

const identityOf = (info: Stats) => `${info.ino}:${info.birthtimeMs}`;

function tailOf(run: TurnRun, identity: string): Tail {
  let messages = 0;
  let bytes = 0;
  for (let i = 0; i < run.turns.length; i++) {
    messages += (run.turns[i] as TurnLine).m.length;
    bytes += run.sizes[i] as number;
  }
  return { ...run, identity, messages, bytes };
}

/**
 * The last turns of recently read session files, by file identity and size, so a
 * read of a file that has not changed opens nothing and parses nothing, and a read
 * after an append parses only the appended lines. Appends made here add their turn
 * without reading it back. A file replaced (compaction), cut (a torn write), or
 * erased and created again is read afresh. Tails are values, never changed in
 * place, so concurrent reads of one file cannot mix their results.
 */
export class TailCache {
  readonly #tails = new Map<string, Tail>();

  constructor(private readonly limits: TailCacheLimits) {}

  /** What `read` would give, when the cached tail of `file` is current and long enough; otherwise undefined. */
  cached(file: string, info: Stats, wanted: number): TurnLine[] | undefined {
    const tail = this.#tails.get(file);
    if (!tail || tail.identity !== identityOf(info) || tail.end !== info.size || (tail.messages < wanted && !tail.whole)) return undefined;
    this.#keep(file, tail);
    return tail.turns;
  }

  /** The turns holding at least the last `wanted` messages of `file` (all when it has fewer), given its current `stat`. */
  async read(file: string, info: Stats, wanted: number): Promise<TurnLine[]> {
    const identity = identityOf(info);
    let tail = this.#tails.get(file);
    if (tail && (tail.identity !== identity || tail.end > info.size)) tail = undefined;
    if (tail && tail.end < info.size) tail = await this.#extend(file, tail, info.size);
    if (!tail || (tail.messages < wanted && !tail.whole)) tail = await this.#load(file, identity, info.size, wanted);
    if (!tail) return [];
    this.#keep(file, tail);
    return tail.turns;
  }

  /** Adds a turn this process appended at byte `at` (ending at `end`), if the cached tail ends exactly there. */
  appended(file: string, at: number, end: number, turn: TurnLine): void {
    const tail = this.#tails.get(file);
    if (!tail || tail.end !== at) return;
    this.#keep(file, { ...tail, turns: [...tail.turns, turn], sizes: [...tail.sizes, end - at], end, messages: tail.messages + turn.m.length, bytes: tail.bytes + end - at });
  }

  forget(file: string): void {
    this.#tails.delete(file);
  }

  clear(): void {
    this.#tails.clear();
  }

  async #load(file: string, identity: string, size: number, wanted: number): Promise<Tail | undefined> {
    const handle = await openIfExists(file);
    if (!handle) return undefined;
    try {
      // A whole read goes forwards from the start; a window backwards from the end.
      const run = Number.isFinite(wanted) ? await tailTurns(handle, size, wanted, file) : await turnsFrom(handle, 0, size, file);
      return tailOf(run, identity);
    } finally {
      await handle.close();
    }
  }

  async #extend(file: string, tail: Tail, size: number): Promise<Tail | undefined> {
    const handle = await openIfExists(file);
    if (!handle) return undefined;
    try {
      const added = await turnsFrom(handle, tail.end, size, file);
      return tailOf({ turns: [...tail.turns, ...added.turns], sizes: [...tail.sizes, ...added.sizes], end: added.end, whole: tail.whole }, tail.identity);
    } finally {
      await handle.close();
    }
  }

  /** Keeps `tail` as the most recently used, dropping its oldest turns past the byte budget. */
  #keep(file: string, tail: Tail): void {
    this.#tails.delete(file);
    let kept = tail;
    if (kept.bytes > this.limits.bytesPerFile) {
      let drop = 0;
      let bytes = kept.bytes;
      while (drop < kept.turns.length - 1 && bytes > this.limits.bytesPerFile) bytes -= kept.sizes[drop++] as number;
      kept = tailOf({ turns: kept.turns.slice(drop), sizes: kept.sizes.slice(drop), end: kept.end, whole: false }, kept.identity);
    }
    this.#tails.set(file, kept);
    while (this.#tails.size > this.limits.files) this.#tails.delete(this.#tails.keys().next().value as string);
  }
}

/** The last `last` messages held by `turns` (all of them for `Infinity`), decoded into new messages. */
export function lastMessages(turns: readonly TurnLine[], last: number): BaseMessage[] {
  let from = turns.length;
  let count = 0;
  while (from > 0 && count < last) count += (turns[--from] as TurnLine).m.length;
  let skip = Math.max(0, count - last);
  const messages: BaseMessage[] = [];
  for (let i = from; i < turns.length; i++) {
    for (const stored of (turns[i] as TurnLine).m) {
      if (skip > 0) skip--;
      else messages.push(decodeMessage(stored));
    }
  }
  return messages;
}
