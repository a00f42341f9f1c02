import { MemoriaError } from "./errors.js";

/**
 * One embedded message: which scope it is recalled in, where it sits (its
 * session's encoded key and its position there), when it was indexed, and its
 * vector. An index keeps no message text: the text stays in the history store (and
 * under its encryption), and is read from there when a hit is shown.
 */
export interface RecallItem {
  /** The encoded key of the scope record (`encodeSessionKey(scopeKeyOf(…))`). */
  scope: string;
  /** The encoded key of the message's session. */
  session: string;
  /** The message's position in its session (0 for the first). */
  position: number;
  /** When the message was indexed (epoch ms): what retention and dates go by. */
  at: number;
  vector: readonly number[];
  /**
   * The message's terms as the lexical index keeps them (recall memory makes them:
   * its words lowercased, stop words out, lightly stemmed, then a `~topic` term per
   * topic they touch), repeats kept: what `searchTerms` ranks by. Left out, the item
   * is found by its vector alone.
   */
  terms?: readonly string[];
}

export interface RecallHit {
  session: string;
  position: number;
  at: number;
  /** From `search`: cosine similarity to the query, from -1 to 1. From `searchTerms`: the BM25 score, 0 or more. Higher is nearer. */
  score: number;
}

/**
 * A word of a lexical query with what may stand in for it (a synonym, a topic):
 * an item scores the best of the word's own BM25 share and each alternative's
 * times its weight, so one word counts once however many of its forms an item holds.
 */
export interface QueryTerm {
  term: string;
  alternatives?: readonly { term: string; weight: number }[];
}

/** Which items `remove` drops: every given condition must hold. */
export interface RecallSelector {
  scope?: string;
  /** Items of these sessions (encoded keys). */
  sessions?: readonly string[];
  /** Items indexed before this time (epoch ms). */
  before?: number;
}

/**
 * Where recall memory keeps its vectors: small enough to put in front of sqlite-vec,
 * any LangChain `VectorStore`, or an exact in-process scan.
 */
export interface RecallIndex {
  /** A short name for messages and benchmarks, e.g. `"sqlite-vec"`. */
  readonly name: string;
  /** Adds items; an item with the session and position of one already held replaces it, so a repeated batch adds nothing. */
  upsert(items: readonly RecallItem[]): Promise<void>;
  /** The `k` items of `scope` nearest to `vector`, nearest first. */
  search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]>;
  /**
   * The `k` items of `scope` whose terms best match `query`, by BM25 (Okapi BM25 with
   * `BM25_K1` and `BM25_B`, over the scope's items; a word given twice counts once;
   * a `QueryTerm` scores its best form), best first; items sharing no term are not
   * returned. Optional: an index without it is searched by vector alone.
   */
  searchTerms?(scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]>;
  /** Removes the items the selector names (at least one condition); resolves with how many. */
  remove(selector: RecallSelector): Promise<number>;
  /**
   * Where the items live, as an id kept with them (the SQL store's: one per database,
   * so a copy of the database file keeps it and a copy of its sessions into another
   * database, e.g. by `memoria migrate`, does not). Recall notes it in its progress
   * and starts a scope again when the index it finds is not the one its progress was
   * made in. Optional: without it, the progress is trusted.
   */
  home?(): Promise<string>;
}

/** Checks a search's `k`: a whole number, 0 or more. */
export function checkRecallK(k: number): void {
  if (!Number.isSafeInteger(k) || k < 0) throw new MemoriaError("INVALID_ARGUMENT", `RecallIndex.search: k must be a whole number >= 0, got ${k}.`);
}

/** Checks `remove`'s selector: at least one condition, so nothing is dropped by accident. */
export function checkRecallSelector(selector: RecallSelector): void {
  if (selector.scope === undefined && selector.sessions === undefined && selector.before === undefined) {
    throw new MemoriaError("INVALID_ARGUMENT", "RecallIndex.remove needs a scope, sessions or a time (before).");
  }
}

/** The dot product of two vectors (their cosine similarity when both are unit vectors), over the shorter one's length. */
export function dotProduct(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

/** The vector as 32-bit floats, scaled to length 1 (a zero vector stays zero), so cosine similarity is a dot product. */
export function unitVector(vector: readonly number[]): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += (out[i] as number) * (out[i] as number);
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * scale;
  }
  return out;
}

/**
 * The positions of the `k` best of `count` candidates, best first, without sorting
 * them all: `ahead(i, j)` says whether candidate i goes before candidate j (of two
 * neither of which is ahead, the first seen stays ahead); `skip(i)` leaves one out.
 * What `topK` and an index's exact scan (`HeldRecallItems.nearest`) both keep by.
 */
export function bestPositions(count: number, k: number, ahead: (i: number, j: number) => boolean, skip?: (i: number) => boolean): number[] {
  const best: number[] = [];
  if (k <= 0) return best;
  for (let i = 0; i < count; i++) {
    if (skip?.(i)) continue;
    if (best.length === k && !ahead(i, best[k - 1] as number)) continue;
    let at = best.length < k ? best.length : k - 1;
    while (at > 0 && ahead(i, best[at - 1] as number)) {
      best[at] = best[at - 1] as number;
      at--;
    }
    best[at] = i;
  }
  return best;
}

/**
 * Keeps the `k` best of scored entries without sorting them all. Among equal scores
 * the first seen stays ahead, unless `tie` says otherwise (negative: `a` goes first).
 */
export function topK<T extends { score: number }>(entries: Iterable<T>, k: number, tie?: (a: T, b: T) => number): T[] {
  const all = Array.isArray(entries) ? (entries as T[]) : [...entries];
  const ahead = (i: number, j: number) => {
    const a = all[i] as T;
    const b = all[j] as T;
    return a.score > b.score || (a.score === b.score && tie !== undefined && tie(a, b) < 0);
  };
  return bestPositions(all.length, k, ahead).map((i) => all[i] as T);
}

/*
 * A memory turn's code runs once per turn, after a person's pause: cold. On the path
 * of every turn, loops stand in for builtins such as `sort`, `flatMap` and
 * `Object.entries`, each of which cost 10-25 µs there, many times its warm cost
 * (bench/results/what-was-tried.md).
 */

/** `items` sorted in place by `order`, stably: by insertion for the dozen items a turn sorts, by `sort` past 32. */
export function sortedFew<T>(items: T[], order: (a: T, b: T) => number): T[] {
  if (items.length > 32) return items.sort(order);
  for (let i = 1; i < items.length; i++) {
    const item = items[i] as T;
    let at = i;
    while (at > 0 && order(items[at - 1] as T, item) > 0) {
      items[at] = items[at - 1] as T;
      at--;
    }
    items[at] = item;
  }
  return items;
}
