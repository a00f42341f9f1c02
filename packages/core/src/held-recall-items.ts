import { TermIndex } from "./lexical-ranking.js";
import { type QueryTerm, type RecallHit, dotProduct, topK, unitVector } from "./recall-index.js";

/** An item as held in this process: its vector already a unit Float32Array. */
export interface HeldRecallItem {
  session: string;
  position: number;
  at: number;
  vector: Float32Array;
}

const idOf = (session: string, position: number) => `${session}\u0000${position}`;
const hitOf = (item: HeldRecallItem, score: number): RecallHit => ({ session: item.session, position: item.position, at: item.at, score });

/**
 * One scope's recall items in this process's memory: vectors searched by an exact
 * scan (a dot product each), terms ranked by BM25. What `exactIndex` keeps per scope,
 * and what an encrypted store's sealed index opens a scope into.
 */
export class HeldRecallItems {
  readonly #items = new Map<string, HeldRecallItem>();
  readonly #terms = new TermIndex<HeldRecallItem>();

  get size(): number {
    return this.#items.size;
  }

  /** Holds `item` in place of any at its session and position; without `terms` it is found by vector only. */
  set(item: HeldRecallItem, terms?: readonly string[]): void {
    const id = idOf(item.session, item.position);
    this.#items.set(id, item);
    if (terms) this.#terms.set(id, item, terms);
    else this.#terms.delete(id);
  }

  delete(item: HeldRecallItem): void {
    const id = idOf(item.session, item.position);
    this.#items.delete(id);
    this.#terms.delete(id);
  }

  /** A snapshot of the items (so the caller may delete while it walks them). */
  items(): HeldRecallItem[] {
    return [...this.#items.values()];
  }

  /** The `k` items nearest to `vector` (cosine), nearest first. */
  nearest(vector: readonly number[], k: number): RecallHit[] {
    const query = unitVector(vector);
    const items = this.#items;
    function* scored(): Generator<RecallHit> {
      for (const item of items.values()) yield hitOf(item, dotProduct(item.vector, query));
    }
    return topK(scored(), k);
  }

  /**
   * The `k` items whose terms best match `query` (BM25, each word by its best form),
   * best first; items sharing none are left out; `tie` orders equal scores.
   */
  matching(query: readonly (string | QueryTerm)[], k: number, tie?: (a: HeldRecallItem, b: HeldRecallItem) => number): RecallHit[] {
    return this.#terms.search(query, k, tie).map(({ value, score }) => hitOf(value, score));
  }
}
