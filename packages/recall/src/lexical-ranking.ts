import { MemoriaError, type QueryTerm } from "@memoria/core";
import { sortedFew, topK } from "./top-k.js";

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
        throw new MemoriaError(
          "INVALID_ARGUMENT",
          `searchTerms: the weight of "${alternative.term}" (for "${term}") must be a number >= 0, got ${alternative.weight}.`,
        );
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
 * each asked term's postings at most once, keeping its sums on the items themselves
 * rather than in maps keyed by id.
 */
export class TermIndex<T> {
  readonly #items = new Map<string, Held<T>>();
  readonly #postings = new Map<string, Postings<T>>();
  #totalLength = 0;
  /** The fewest terms an item held since the index began: with each term's most, what bounds a share. */
  #shortest = Number.POSITIVE_INFINITY;
  #searches = 0;
  #wordIds = 0;

  /** Holds `terms` for the item `id` (replacing what it held); `value` comes back with its hits. */
  set(id: string, value: T, terms: readonly string[]): void {
    this.delete(id);
    const counts = termCounts(terms);
    const held: Held<T> = { value, terms: [...counts.keys()], length: terms.length, search: 0, word: 0, score: 0, share: 0 };
    for (const [term, count] of counts) {
      let postings = this.#postings.get(term);
      if (!postings) {
        postings = { holders: new Map(), most: 0 };
        this.#postings.set(term, postings);
      }
      postings.holders.set(held, count);
      postings.most = Math.max(postings.most, count);
    }
    this.#shortest = Math.min(this.#shortest, terms.length);
    this.#items.set(id, held);
    this.#totalLength += terms.length;
  }

  delete(id: string): void {
    const held = this.#items.get(id);
    if (!held) return;
    for (const term of held.terms) {
      const postings = this.#postings.get(term);
      postings?.holders.delete(held);
      if (postings?.holders.size === 0) this.#postings.delete(term);
    }
    this.#items.delete(id);
    this.#totalLength -= held.length;
  }

  /**
   * The `k` items best matching `query`, best first, equal scores in `tie`'s order;
   * items sharing no term are left out.
   *
   * Exact, but not exhaustive (MaxScore): the words are walked rarest first (by the
   * most each can add to a score), and once the words not yet walked could not
   * together lift an item that holds none of the walked ones above the k-th best so
   * far, their postings are no longer walked: only the items already matched are
   * looked up in them. A query with one rare word (a name, a number) among common
   * ones then costs about the rare word's postings, not the common ones'.
   */
  search(query: readonly (string | QueryTerm)[], k: number, tie: (a: T, b: T) => number): { value: T; score: number }[] {
    if (k <= 0) return [];
    const average = this.#totalLength / (this.#items.size || 1);
    const search = ++this.#searches;
    const words = this.#words(query, average);
    // Loops and sortedFew, not reduce / sort / flatMap: a memory turn runs this once, cold,
    // where each of those builtins costs more than the walk of a small scope.
    let unwalked = 0;
    for (const word of words) unwalked += word.bound;
    const matched: Held<T>[] = [];
    for (const word of sortedFew([...words], (a, b) => b.bound - a.bound)) {
      // Strictly below the k-th best (with room for rounding): an item matched by no walked word cannot reach the top k.
      const walk = matched.length < k || unwalked * (1 + 1e-9) >= kthScore(matched, k);
      unwalked -= word.bound;
      if (walk) this.#walk(word, search, matched, average);
      else this.#lookUp(word, search, matched, average);
    }
    // Summed rarest word first, a score can differ from the query-order sum (the SQL
    // index's) in its last bits: the items that can be among the best k are summed again in
    // query order, so equal scores stay equal to the SQL's and ties fall to `tie` alike.
    const least = matched.length < k ? 0 : kthScore(matched, k) * (1 - 1e-9);
    const best: { value: T; score: number }[] = [];
    for (const held of matched) if (held.score >= least) best.push({ value: held.value, score: this.#score(held, words, average) });
    return topK(best, k, (a, b) => tie(a.value, b.value));
  }

  /** `held`'s score for `words`, each word's best form, summed in their order. */
  #score(held: Held<T>, words: readonly Word<T>[], average: number): number {
    let score = 0;
    for (const word of words) {
      let share = -1;
      for (const { holders, idf } of word.forms) {
        const count = holders.get(held);
        if (count !== undefined) share = Math.max(share, termScore(idf, count, held.length, average));
      }
      if (share >= 0) score += share;
    }
    return score;
  }

  /** The query's words with their forms' postings and weights, and the most each can add to a score. */
  #words(query: readonly (string | QueryTerm)[], average: number): Word<T>[] {
    return queryGroups(query).map((group) => {
      const forms: Word<T>["forms"] = [];
      let bound = 0;
      for (const { term, weight } of group) {
        const postings = this.#postings.get(term);
        if (!postings) continue;
        const { holders, most } = postings;
        const idf = weight * termWeight(this.#items.size, holders.size);
        forms.push({ holders, idf });
        // A share grows with the count and shrinks with the item's length: none is above
        // the one of the most counts of this term in the shortest item (both only ever
        // kept from above: a deleted item's may still count, which only loosens it).
        bound = Math.max(bound, termScore(idf, most, this.#shortest, average));
      }
      return { id: ++this.#wordIds, forms, bound };
    });
  }

  /** Adds the word's share to every item holding one of its forms (its best form's), matching the items new to this search. */
  #walk(word: Word<T>, search: number, matched: Held<T>[], average: number): void {
    if (word.forms.length === 1) {
      // One form (most words): each holder's share is that form's, added as it is met.
      const { holders, idf } = word.forms[0] as Word<T>["forms"][number];
      for (const [held, count] of holders) {
        enter(held, search, matched);
        held.score += termScore(idf, count, held.length, average);
      }
      return;
    }
    const touched: Held<T>[] = [];
    for (const { holders, idf } of word.forms) {
      for (const [held, count] of holders) {
        if (held.word !== word.id) touched.push(held);
        this.#share(held, word.id, termScore(idf, count, held.length, average));
      }
    }
    for (const held of touched) {
      enter(held, search, matched);
      held.score += held.share;
    }
  }

  /** Adds the word's share to the items already matched only: each looked up in its forms' postings, or the postings walked where they are the shorter. */
  #lookUp(word: Word<T>, search: number, matched: Held<T>[], average: number): void {
    for (const { holders, idf } of word.forms) {
      if (holders.size < matched.length) {
        for (const [held, count] of holders) if (held.search === search) this.#share(held, word.id, termScore(idf, count, held.length, average));
      } else {
        for (const held of matched) {
          const count = holders.get(held);
          if (count !== undefined) this.#share(held, word.id, termScore(idf, count, held.length, average));
        }
      }
    }
    for (const held of matched) if (held.word === word.id) held.score += held.share;
  }

  /** Notes `share` as `held`'s for the word, unless one of the word's other forms gave it more. */
  #share(held: Held<T>, word: number, share: number): void {
    if (held.word !== word) {
      held.word = word;
      held.share = share;
    } else if (share > held.share) held.share = share;
  }
}

/** The items holding a term, with their counts, and the most any item held it (since the term was first held). */
interface Postings<T> {
  holders: Map<Held<T>, number>;
  most: number;
}

/** A query word as a search ranks it: its forms' postings and weights, and the most it can add to an item's score. */
interface Word<T> {
  id: number;
  forms: { holders: Map<Held<T>, number>; idf: number }[];
  bound: number;
}

/** The k-th best score of `matched` (k >= 1, at least k of them). */
function kthScore(matched: readonly { score: number }[], k: number): number {
  const best = new Float64Array(k).fill(Number.NEGATIVE_INFINITY);
  for (const { score } of matched) {
    if (score <= (best[k - 1] as number)) continue;
    let at = k - 1;
    while (at > 0 && score > (best[at - 1] as number)) {
      best[at] = best[at - 1] as number;
      at--;
    }
    best[at] = score;
  }
  return best[k - 1] as number;
}

/** Matches `held` in the running search, from a score of 0, the first time a walked word meets it. */
function enter<T>(held: Held<T>, search: number, matched: Held<T>[]): void {
  if (held.search === search) return;
  held.search = search;
  held.score = 0;
  matched.push(held);
}
