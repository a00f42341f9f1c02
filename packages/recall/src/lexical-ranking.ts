import { MemoriaError, type QueryTerm } from "@memoria/core";
import { bestPositions, sortedFew } from "./top-k.js";

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

/**
 * A lexical index in this process's memory: per term the items holding it with
 * their counts, ranked by BM25. The word side of `HeldRecallItems`.
 *
 * Each item lives in a numbered slot, and a term's postings are two typed arrays
 * (the slots holding it and their counts), so a search over a common word reads
 * numbers in a row and keeps its sums in arrays by slot, rather than walking a map
 * of objects: at 100,000 items a word in a quarter of them costs about a millisecond.
 * An item taken out leaves every postings list at once (its place is filled by the
 * list's last entry), so no search ever meets it, and its slot is taken by the next
 * item held.
 */
export class TermIndex<T> {
  readonly #slots = new Map<string, number>();
  readonly #free: number[] = [];
  /** By slot: the item's value, the postings of its terms (each once), and its place in each. */
  readonly #values: (T | undefined)[] = [];
  readonly #lists: (Postings[] | undefined)[] = [];
  readonly #places: (number[] | undefined)[] = [];
  readonly #postings = new Map<string, Postings>();
  #scratch = new Scratch(0);
  #totalLength = 0;
  /** The fewest terms an item held since the index began: with each term's most, what bounds a share. */
  #shortest = Number.POSITIVE_INFINITY;

  /** Holds `terms` for the item `id` (replacing what it held); `value` comes back with its hits. */
  set(id: string, value: T, terms: readonly string[]): void {
    this.delete(id);
    const slot = this.#free.pop() ?? this.#values.length;
    const counts = termCounts(terms);
    const lists: Postings[] = [];
    const places: number[] = [];
    for (const [term, count] of counts) {
      let postings = this.#postings.get(term);
      if (!postings) {
        postings = new Postings(term);
        this.#postings.set(term, postings);
      }
      lists.push(postings);
      places.push(postings.add(slot, count));
    }
    this.#slots.set(id, slot);
    this.#values[slot] = value;
    this.#lists[slot] = lists;
    this.#places[slot] = places;
    if (this.#scratch.length <= slot) this.#scratch = new Scratch(Math.max(16, 2 * (slot + 1)), this.#scratch);
    this.#scratch.lengths[slot] = terms.length;
    this.#shortest = Math.min(this.#shortest, terms.length);
    this.#totalLength += terms.length;
  }

  delete(id: string): void {
    const slot = this.#slots.get(id);
    if (slot === undefined) return;
    const lists = this.#lists[slot] as Postings[];
    const places = this.#places[slot] as number[];
    for (const [i, postings] of lists.entries()) {
      const moved = postings.remove(places[i] as number);
      // The list's last entry now fills the place: note where it went.
      if (moved !== undefined) (this.#places[moved] as number[])[(this.#lists[moved] as Postings[]).indexOf(postings)] = places[i] as number;
      if (postings.size === 0) this.#postings.delete(postings.term);
    }
    this.#slots.delete(id);
    this.#values[slot] = undefined;
    this.#lists[slot] = undefined;
    this.#places[slot] = undefined;
    this.#free.push(slot);
    this.#totalLength -= this.#scratch.lengths[slot] as number;
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
    const average = this.#totalLength / (this.#slots.size || 1);
    const scratch = this.#scratch.begin();
    const words = this.#words(query, average);
    // Loops and sortedFew, not reduce / sort / flatMap: a memory turn runs this once, cold,
    // where each of those builtins costs more than the walk of a small scope.
    let unwalked = 0;
    for (const word of words) unwalked += word.bound;
    for (const word of sortedFew([...words], (a, b) => b.bound - a.bound)) {
      // Strictly below the k-th best (with room for rounding): an item matched by no walked word cannot reach the top k.
      const walk = scratch.matchedCount < k || unwalked * (1 + 1e-9) >= scratch.kthScore(k);
      unwalked -= word.bound;
      this.#add(word, average, walk);
    }
    // Summed rarest word first, a score can differ from the query-order sum (the SQL
    // index's) in its last bits: the items that can be among the best k are summed again in
    // query order, so equal scores stay equal to the SQL's and ties fall to `tie` alike.
    scratch.keep(scratch.matchedCount < k ? 0 : scratch.kthScore(k) * (1 - 1e-9));
    for (const word of words) this.#add(word, average, false);
    const { matched, score } = scratch;
    const values = this.#values;
    const best = bestPositions(scratch.matchedCount, k, (i, j) => {
      const a = matched[i] as number;
      const b = matched[j] as number;
      return (score[a] as number) > (score[b] as number) || (score[a] === score[b] && tie(values[a] as T, values[b] as T) < 0);
    });
    return best.map((i) => ({ value: values[matched[i] as number] as T, score: score[matched[i] as number] as number }));
  }

  /**
   * Adds the word's share (its best form's) to the score of every item holding it,
   * matching those new to the search, or (`walk` false) to the items already matched
   * only: each form's postings walked, or, where they are more than four times the
   * matched items, each of those looked up (a lookup costs about four postings read in
   * a row: two common words over 100,000 items took 6.6 / 2.2 / 1.6 / 2.4 ms walking
   * below 1 / 2 / 4 / 8 times).
   */
  #add(word: Word, average: number, walk: boolean): void {
    const scratch = this.#scratch;
    scratch.nextWord();
    for (const form of word.forms) {
      if (walk || form.postings.size < 4 * scratch.matchedCount) scratch.walk(form, average, walk);
      else this.#lookUp(form, average);
    }
    scratch.addShares(walk);
  }

  /** How often the item in `slot` holds the form's term, or undefined. */
  #count(slot: number, { postings }: Form): number | undefined {
    const at = (this.#lists[slot] as Postings[]).indexOf(postings);
    return at < 0 ? undefined : postings.counts[(this.#places[slot] as number[])[at] as number];
  }

  /** Notes the form's share for each item already matched that holds it, looked up from the item's side. */
  #lookUp(form: Form, average: number): void {
    const scratch = this.#scratch;
    for (let i = 0; i < scratch.matchedCount; i++) {
      const slot = scratch.matched[i] as number;
      const count = this.#count(slot, form);
      if (count !== undefined) scratch.share(slot, termScore(form.idf, count, scratch.lengths[slot] as number, average));
    }
  }

  /** The query's words with their forms' postings and weights, and the most each can add to a score. */
  #words(query: readonly (string | QueryTerm)[], average: number): Word[] {
    return queryGroups(query).map((group) => {
      const forms: Form[] = [];
      let bound = 0;
      for (const { term, weight } of group) {
        const postings = this.#postings.get(term);
        if (!postings) continue;
        const idf = weight * termWeight(this.#slots.size, postings.size);
        forms.push({ postings, idf });
        // A share grows with the count and shrinks with the item's length: none is above
        // the one of the most counts of this term in the shortest item (both only ever
        // kept from above: a deleted item's may still count, which only loosens it).
        bound = Math.max(bound, termScore(idf, postings.most, this.#shortest, average));
      }
      return { forms, bound };
    });
  }
}

/** The items holding a term, by slot, with their counts, and the most any item held it (since the term was first held). */
class Postings {
  slots = new Int32Array(4);
  counts = new Int32Array(4);
  size = 0;
  most = 0;

  constructor(readonly term: string) {}

  /** Adds `slot` holding the term `count` times; its place in the list. */
  add(slot: number, count: number): number {
    if (this.size === this.slots.length) {
      const slots = new Int32Array(2 * this.size);
      const counts = new Int32Array(2 * this.size);
      slots.set(this.slots);
      counts.set(this.counts);
      this.slots = slots;
      this.counts = counts;
    }
    this.slots[this.size] = slot;
    this.counts[this.size] = count;
    this.most = Math.max(this.most, count);
    return this.size++;
  }

  /** Takes out the entry at `place`, moving the last one there: the slot so moved, if any. */
  remove(place: number): number | undefined {
    const last = --this.size;
    if (place === last) return undefined;
    this.slots[place] = this.slots[last] as number;
    this.counts[place] = this.counts[last] as number;
    return this.slots[place];
  }
}

/** One form of a query word as a search ranks it: its term's postings and its weight. */
interface Form {
  postings: Postings;
  idf: number;
}

/** A query word as a search ranks it: its forms, and the most it can add to an item's score. */
interface Word {
  forms: Form[];
  bound: number;
}

/**
 * A search's sums, in arrays by slot (a search never awaits, so one set serves them
 * all): the items matched so far, each one's score, and its best share for the word
 * being walked; stamps say which search and which word last wrote a slot's numbers.
 * Also each slot's length, so that a walk reads one array per posting.
 */
class Scratch {
  readonly lengths: Float64Array;
  readonly score: Float64Array;
  readonly matched: Int32Array;
  matchedCount = 0;
  readonly #searchOf: Float64Array;
  readonly #wordOf: Float64Array;
  readonly #share: Float64Array;
  readonly #touched: Int32Array;
  #touchedCount = 0;
  #search = 0;
  #word = 0;

  constructor(
    readonly length: number,
    from?: Scratch,
  ) {
    this.lengths = new Float64Array(length);
    this.score = new Float64Array(length);
    this.matched = new Int32Array(length);
    this.#searchOf = new Float64Array(length);
    this.#wordOf = new Float64Array(length);
    this.#share = new Float64Array(length);
    this.#touched = new Int32Array(length);
    if (from) this.lengths.set(from.lengths);
  }

  /** Starts a search: nothing matched. */
  begin(): this {
    this.#search++;
    this.matchedCount = 0;
    return this;
  }

  /** Starts the search again over the items matched so far whose score is at least `least`, from 0. */
  keep(least: number): void {
    this.#search++;
    let kept = 0;
    for (let i = 0; i < this.matchedCount; i++) {
      const slot = this.matched[i] as number;
      if ((this.score[slot] as number) < least) continue;
      this.matched[kept++] = slot;
      this.#searchOf[slot] = this.#search;
      this.score[slot] = 0;
    }
    this.matchedCount = kept;
  }

  /** Starts the next word: no shares noted. */
  nextWord(): void {
    this.#word++;
    this.#touchedCount = 0;
  }

  /** Notes `share` as the slot's for the word, unless another of the word's forms gave it more. */
  share(slot: number, share: number): void {
    if (this.#wordOf[slot] !== this.#word) {
      this.#wordOf[slot] = this.#word;
      this.#share[slot] = share;
      this.#touched[this.#touchedCount++] = slot;
    } else if (share > (this.#share[slot] as number)) this.#share[slot] = share;
  }

  /** Notes the form's share for every item holding it, or (`matching` false) only for those already matched. */
  walk({ postings, idf }: Form, average: number, matching: boolean): void {
    const { slots, counts, size } = postings;
    for (let i = 0; i < size; i++) {
      const slot = slots[i] as number;
      if (matching || this.#searchOf[slot] === this.#search) this.share(slot, termScore(idf, counts[i] as number, this.lengths[slot] as number, average));
    }
  }

  /** Adds the word's noted shares to the scores, matching (`matching`) the items new to this search. */
  addShares(matching: boolean): void {
    for (let i = 0; i < this.#touchedCount; i++) {
      const slot = this.#touched[i] as number;
      if (this.#searchOf[slot] !== this.#search) {
        if (!matching) continue;
        this.#searchOf[slot] = this.#search;
        this.score[slot] = this.#share[slot] as number;
        this.matched[this.matchedCount++] = slot;
      } else this.score[slot] = (this.score[slot] as number) + (this.#share[slot] as number);
    }
  }

  /** The k-th best score of the items matched (k >= 1, at least k of them). */
  kthScore(k: number): number {
    const best = new Float64Array(k).fill(Number.NEGATIVE_INFINITY);
    for (let i = 0; i < this.matchedCount; i++) {
      const score = this.score[this.matched[i] as number] as number;
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
}
