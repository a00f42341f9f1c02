import type { Stats } from "node:fs";
import type { BaseMessage } from "@langchain/core/messages";
import { decodeMessage } from "@memoria/core";
import { type TurnLine, type TurnRun, openRange, tailTurns, turnsFrom } from "./session-file.js";

/** The turns this process last read at the end of one file, and which file that was. */
interface Tail extends TurnRun {
  /** Inode and birth time: a file erased and created again (even on the same inode) is another file. */
  ino: number;
  birth: number;
  messages: number;
  bytes: number;
}

/** A cached turn whose messages were decoded once, frozen: every read of it shares them. */
interface SharedTurn extends TurnLine {
  m: BaseMessage[];
  shared: true;
}

export interface TailCacheLimits {
  /** Files whose tail is kept (least recently read dropped first). */
  files: number;
  /** Bytes of turn lines kept per file: a longer whole read is not cached. */
  bytesPerFile: number;
  /** Bytes of turn lines kept over all files (least recently read dropped first). */
  bytes: number;
  /**
   * Decodes a stored message, once, into the frozen message that every read of a
   * cached turn then shares. Unset, each read decodes its own copies.
   */
  share?: (stored: unknown) => BaseMessage;
}

function tailOf(run: TurnRun, info: Stats): Tail {
  let messages = 0;
  let bytes = 0;
  for (let i = 0; i < run.turns.length; i++) {
    messages += (run.turns[i] as TurnLine).m.length;
    bytes += run.sizes[i] as number;
  }
  return { ...run, ino: info.ino, birth: info.birthtimeMs, messages, bytes };
}

const sameFile = (tail: Tail, info: Stats) => tail.ino === info.ino && tail.birth === info.birthtimeMs;

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
  /** Bytes of turn lines held over all files. */
  #bytes = 0;

  constructor(private readonly limits: TailCacheLimits) {}

  /** What `read` would give, when the cached tail of `file` is current and long enough; otherwise undefined. */
  cached(file: string, info: Stats, wanted: number): TurnLine[] | undefined {
    const tail = this.#tails.get(file);
    if (!tail || !sameFile(tail, info) || tail.end !== info.size || (tail.messages < wanted && !tail.whole)) return undefined;
    this.#keep(file, tail);
    return tail.turns;
  }

  /** The turns holding at least the last `wanted` messages of `file` (all when it has fewer), given its current `stat`. */
  async read(file: string, info: Stats, wanted: number): Promise<TurnLine[]> {
    let tail = this.#tails.get(file);
    if (tail && (!sameFile(tail, info) || tail.end > info.size)) tail = undefined;
    if (tail && tail.end < info.size) tail = await this.#extend(file, tail, info);
    if (!tail || (tail.messages < wanted && !tail.whole)) tail = await this.#load(file, info, wanted);
    if (!tail) return [];
    this.#keep(file, tail);
    return tail.turns;
  }

  /** Adds a turn this process appended at byte `at` (ending at `end`), if the cached tail ends exactly there. */
  appended(file: string, at: number, end: number, turn: TurnLine): void {
    const tail = this.#tails.get(file);
    if (!tail || tail.end !== at) return;
    const run = this.#shared({ turns: [...tail.turns, turn], sizes: [...tail.sizes, end - at], end, whole: tail.whole });
    this.#keep(file, { ...run, ino: tail.ino, birth: tail.birth, messages: tail.messages + turn.m.length, bytes: tail.bytes + end - at });
  }

  /** Starts the tail of a file this process just began with one turn (at byte `at`, after the header): the next read of it opens nothing. */
  created(file: string, info: Stats, at: number, turn: TurnLine): void {
    this.#keep(file, tailOf(this.#shared({ turns: [turn], sizes: [info.size - at], end: info.size, whole: true }), info));
  }

  forget(file: string): void {
    const tail = this.#tails.get(file);
    if (tail) this.#drop(file, tail);
  }

  clear(): void {
    this.#tails.clear();
    this.#bytes = 0;
  }

  async #load(file: string, info: Stats, wanted: number): Promise<Tail | undefined> {
    const handle = await openRange(file, info.size);
    if (!handle) return undefined;
    try {
      // A whole read goes forwards from the start; a window backwards from the end.
      const run = Number.isFinite(wanted) ? await tailTurns(handle, info.size, wanted, file) : await turnsFrom(handle, 0, info.size, file);
      return tailOf(this.#shared(run), info);
    } finally {
      await handle.close();
    }
  }

  async #extend(file: string, tail: Tail, info: Stats): Promise<Tail | undefined> {
    const handle = await openRange(file, info.size - tail.end);
    if (!handle) return undefined;
    try {
      const added = await turnsFrom(handle, tail.end, info.size, file);
      return tailOf(this.#shared({ turns: [...tail.turns, ...added.turns], sizes: [...tail.sizes, ...added.sizes], end: added.end, whole: tail.whole }), info);
    } finally {
      await handle.close();
    }
  }

  /**
   * The run with its newest turns (those `#keep` will keep) holding shared, frozen
   * messages, when the store shares them. Older turns, read past the budget, stay
   * in codec form: a read decodes its own copies of them and nothing keeps them.
   */
  #shared(run: TurnRun): TurnRun {
    const share = this.limits.share;
    if (!share) return run;
    let turns = run.turns;
    let bytes = 0;
    for (let i = turns.length - 1; i >= 0; i--) {
      bytes += run.sizes[i] as number;
      if (bytes > this.limits.bytesPerFile && i < turns.length - 1) break;
      const turn = turns[i] as TurnLine;
      if ((turn as SharedTurn).shared) break; // the older ones were shared when they came in
      let messages: BaseMessage[];
      try {
        messages = turn.m.map(share);
      } catch {
        continue; // left in codec form: only a read that needs this turn fails on it, as before
      }
      if (turns === run.turns) turns = turns.slice();
      const sharedTurn: SharedTurn = { t: turn.t, n: turn.n, m: messages, shared: true };
      turns[i] = sharedTurn;
    }
    return turns === run.turns ? run : { ...run, turns };
  }

  /** Keeps `tail` as the most recently used, dropping its oldest turns past the per-file budget, then the least recently used files past the others. */
  #keep(file: string, tail: Tail): void {
    const before = this.#tails.get(file);
    if (before) this.#drop(file, before);
    let kept = tail;
    if (kept.bytes > this.limits.bytesPerFile) {
      let drop = 0;
      let bytes = kept.bytes;
      while (drop < kept.turns.length - 1 && bytes > this.limits.bytesPerFile) bytes -= kept.sizes[drop++] as number;
      kept = { ...kept, turns: kept.turns.slice(drop), sizes: kept.sizes.slice(drop), whole: false, messages: countMessages(kept.turns, drop), bytes };
    }
    this.#tails.set(file, kept);
    this.#bytes += kept.bytes;
    if (this.#tails.size <= this.limits.files && this.#bytes <= this.limits.bytes) return;
    for (const [oldest, old] of this.#tails) {
      if (oldest === file || (this.#tails.size <= this.limits.files && this.#bytes <= this.limits.bytes)) break;
      this.#drop(oldest, old);
    }
  }

  #drop(file: string, tail: Tail): void {
    this.#tails.delete(file);
    this.#bytes -= tail.bytes;
  }
}

function countMessages(turns: readonly TurnLine[], from: number): number {
  let count = 0;
  for (let i = from; i < turns.length; i++) count += (turns[i] as TurnLine).m.length;
  return count;
}

/** The last `last` messages held by `turns` (all of them for `Infinity`) in a new array: shared frozen messages, or new ones decoded. */
export function lastMessages(turns: readonly TurnLine[], last: number): BaseMessage[] {
  let from = turns.length;
  let count = 0;
  while (from > 0 && count < last) count += (turns[--from] as TurnLine).m.length;
  let skip = Math.max(0, count - last);
  const messages: BaseMessage[] = [];
  for (let i = from; i < turns.length; i++) {
    const turn = turns[i] as TurnLine;
    const shared = (turn as SharedTurn).shared === true;
    for (const stored of turn.m) {
      if (skip > 0) skip--;
      else messages.push(shared ? (stored as BaseMessage) : decodeMessage(stored));
    }
  }
  return messages;
}
