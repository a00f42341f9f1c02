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
  counts: Map<string, number>;
  length: number;
}

/**
 * A lexical index in this process's memory: per item its terms' counts, per term
 * the items holding it, ranked by BM25. The word side of `HeldRecallItems`.
 */
export class TermIndex<T> {
  readonly #items = new Map<string, Held<T>>();
  readonly #postings = new Map<string, Set<string>>();
  #totalLength = 0;

  /** Holds `terms` for the item `id` (replacing what it held); `value` comes back with its hits. */
  set(id: string, value: T, terms: readonly string[]): void {
    this.delete(id);
    const counts = termCounts(terms);
    for (const term of counts.keys()) {
      let holders = this.#postings.get(term);
      if (!holders) {
        holders = new Set();
        this.#postings.set(term, holders);
      }
      holders.add(id);
    }
    this.#items.set(id, { value, counts, length: terms.length });
    this.#totalLength += terms.length;
  }

  delete(id: string): void {
    const held = this.#items.get(id);
    if (!held) return;
    for (const term of held.counts.keys()) {
      const holders = this.#postings.get(term);
      holders?.delete(id);
      if (holders?.size === 0) this.#postings.delete(term);
    }
    this.#items.delete(id);
    this.#totalLength -= held.length;
  }

  /** The `k` items best matching `query`, best first; items sharing no term are left out. */
  search(query: readonly (string | QueryTerm)[], k: number): { value: T; score: number }[] {
    const average = this.#totalLength / (this.#items.size || 1);
    const scores = new Map<string, number>();
    for (const group of queryGroups(query)) {
      const best = new Map<string, number>();
      for (const { term, weight } of group) {
        const holders = this.#postings.get(term);
        if (!holders) continue;
        const idf = weight * termWeight(this.#items.size, holders.size);
        for (const id of holders) {
          const held = this.#items.get(id) as Held<T>;
          best.set(id, Math.max(best.get(id) ?? 0, termScore(idf, held.counts.get(term) as number, held.length, average)));
        }
      }
      for (const [id, score] of best) scores.set(id, (scores.get(id) ?? 0) + score);
    }
    const items = this.#items;
    function* scored() {
      for (const [id, score] of scores) yield { value: (items.get(id) as Held<T>).value, score };
    }
    return topK(scored(), k);
  }
}
