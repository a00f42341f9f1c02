import { MemoriaError } from "./errors.js";
import { type QueryTerm, topK } from "./recall-index.js";

/**
 * BM25's term-frequency saturation and length normalization. `b` is below the usual
 * 0.75: in chat, the short lines are small talk ("Hey Tom! How was your week?"), and
 * full length normalization ranks them above the longer turns that hold facts. Both
 * were chosen on the recall-quality set (`pnpm bench --only W8`).
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.4;

/** How much a term tells, by how many of the scope's `items` hold it (BM25's idf, never below 0). */
export function termWeight(items: number, holding: number): number {
  return Math.log(1 + (items - holding + 0.5) / (holding + 0.5));
}

/** One term's share of an item's BM25 score: its weight, times its count saturated and scaled by the item's length against the average. */
export function termScore(weight: number, count: number, length: number, averageLength: number): number {
  const norm = 1 - BM25_B + (BM25_B * length) / (averageLength || 1);
  return (weight * count * (BM25_K1 + 1)) / (count + BM25_K1 * norm);
}

/** Each term of an item with how often it occurs there, empty ones out. */
export function termCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) if (term !== "") counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/** One word of a query as ranked: its forms, each with its weight (the word's own is 1). */
export type QueryGroup = readonly { term: string; weight: number }[];

/**
 * A query's words as groups of forms: a word given twice once, empty terms out; a
 * weight that is not a finite number >= 0 is a typed error naming it.
 */
export function queryGroups(query: readonly (string | QueryTerm)[]): QueryGroup[] {
  const seen = new Set<string>();
  const groups: QueryGroup[] = [];
  for (const entry of query) {
    const { term, alternatives = [] } = typeof entry === "string" ? { term: entry } : entry;
    if (term === "" || seen.has(term)) continue;
    seen.add(term);
    const forms = [{ term, weight: 1 }];
    for (const alternative of alternatives) {
      if (!(Number.isFinite(alternative.weight) && alternative.weight >= 0)) {
        throw new MemoriaError("INVALID_ARGUMENT", `searchTerms: the weight of "${alternative.term}" (for "${term}") must be a number >= 0, got ${alternative.weight}.`);
      }
      if (alternative.term !== "" && alternative.weight > 0 && !forms.some((form) => form.term === alternative.term)) forms.push(alternative);
    }
    groups.push(forms);
  }
  return groups;
}

interface Held<T> {
  value: T;
  /** Its terms, each once: where to take it out of the postings. */
  terms: string[];
  length: number;
  /** Scratch of the search running (one at a time: a search never awaits): the last search and word that touched it, its score and its best share for that word. */
  search: number;
  word: number;
  score: number;
  share: number;
}

/**
 * A lexical index in this process's memory: per term the items holding it with
 * their counts, ranked by BM25. The word side of `HeldRecallItems`. A search walks
 * each asked term's postings once, keeping its sums on the items themselves rather
 * than in maps keyed by id.
 */
export class TermIndex<T> {
  readonly #items = new Map<string, Held<T>>();
  readonly #postings = new Map<string, Map<Held<T>, number>>();
  #totalLength = 0;
  #searches = 0;
  #words = 0;

  /** Holds `terms` for the item `id` (replacing what it held); `value` comes back with its hits. */
  set(id: string, value: T, terms: readonly string[]): void {
    this.delete(id);
    const counts = termCounts(terms);
    const held: Held<T> = { value, terms: [...counts.keys()], length: terms.length, search: 0, word: 0, score: 0, share: 0 };
    for (const [term, count] of counts) {
      let holders = this.#postings.get(term);
      if (!holders) {
        holders = new Map();
        this.#postings.set(term, holders);
      }
      holders.set(held, count);
    }
    this.#items.set(id, held);
    this.#totalLength += terms.length;
  }

  delete(id: string): void {
    const held = this.#items.get(id);
    if (!held) return;
    for (const term of held.terms) {
      const holders = this.#postings.get(term);
      holders?.delete(held);
      if (holders?.size === 0) this.#postings.delete(term);
    }
    this.#items.delete(id);
    this.#totalLength -= held.length;
  }

  /**
   * The `k` items best matching `query`, best first; items sharing no term are left
   * out. Equal scores keep the order items were first matched in, unless `tie` orders them.
   */
  search(query: readonly (string | QueryTerm)[], k: number, tie?: (a: T, b: T) => number): { value: T; score: number }[] {
    const average = this.#totalLength / (this.#items.size || 1);
    const search = ++this.#searches;
    const matched: Held<T>[] = [];
    for (const group of queryGroups(query)) {
      const word = ++this.#words;
      const touched: Held<T>[] = [];
      for (const { term, weight } of group) {
        const holders = this.#postings.get(term);
        if (!holders) continue;
        const idf = weight * termWeight(this.#items.size, holders.size);
        for (const [held, count] of holders) {
          const share = termScore(idf, count, held.length, average);
          if (held.word !== word) {
            held.word = word;
            held.share = share;
            touched.push(held);
          } else if (share > held.share) held.share = share;
        }
      }
      for (const held of touched) {
        if (held.search !== search) {
          held.search = search;
          held.score = 0;
          matched.push(held);
        }
        held.score += held.share;
      }
    }
    return topK(
      matched.map((held) => ({ value: held.value, score: held.score })),
      k,
      tie && ((a, b) => tie(a.value, b.value)),
    );
  }
}
