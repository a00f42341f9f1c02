import { TermIndex } from "./lexical-ranking.js";
import type { QueryTerm, RecallHit } from "@memoria/core";
import { bestPositions } from "./top-k.js";
import { unitVector } from "./vectors.js";
import { VectorSlab } from "./vector-slab.js";
import { type RecallPlace, placeId, tieOrder } from "./recall-place.js";

/** An item as held in this process: its vector already a unit Float32Array. */
export interface HeldRecallItem extends RecallPlace {
  vector: Float32Array;
}

interface Entry {
  place: RecallPlace;
  slot: number;
  /** Its vector's length (the slab pads rows). */
  length: number;
}

const hitOf = (place: RecallPlace, score: number): RecallHit => ({ session: place.session, position: place.position, at: place.at, score });

/**
 * One scope's recall items in this process's memory: vectors searched by an exact
 * scan (a dot product each, over one block of memory: vector-slab.ts), terms ranked
 * by BM25. What `exactIndex` keeps per scope, what an encrypted store's sealed index
 * opens a scope into, and what a SQL store holds of the scopes it queries.
 */
export class HeldRecallItems {
  readonly #items = new Map<string, Entry>();
  /** The entry in each slot of the slab; undefined where the slot is free. */
  readonly #bySlot: (Entry | undefined)[] = [];
  readonly #vectors = new VectorSlab();
  readonly #terms = new TermIndex<RecallPlace>();

  get size(): number {
    return this.#items.size;
  }

  /** Holds `item` in place of any at its session and position; without `terms` it is found by vector only. */
  set(item: HeldRecallItem, terms?: readonly string[]): void {
    const id = placeId(item.session, item.position);
    const place: RecallPlace = { session: item.session, position: item.position, at: item.at };
    const held = this.#items.get(id);
    if (held) this.#vectors.set(held.slot, item.vector);
    const entry: Entry = { place, slot: held ? held.slot : this.#vectors.add(item.vector), length: item.vector.length };
    this.#items.set(id, entry);
    this.#bySlot[entry.slot] = entry;
    if (terms) this.#terms.set(id, place, terms);
    else this.#terms.delete(id);
  }

  delete(item: RecallPlace): void {
    const id = placeId(item.session, item.position);
    const held = this.#items.get(id);
    if (!held) return;
    this.#items.delete(id);
    this.#bySlot[held.slot] = undefined;
    this.#vectors.remove(held.slot);
    this.#terms.delete(id);
  }

  /** A snapshot of where the items are (so the caller may delete while it walks them): what choosing items to remove needs, without their vectors. */
  places(): RecallPlace[] {
    return [...this.#items.values()].map(({ place }) => place);
  }

  /** A snapshot of the items with their vectors, copied out of the slab. */
  items(): HeldRecallItem[] {
    return [...this.#items.values()].map(({ place, slot, length }) => ({ ...place, vector: this.#vectors.read(slot, length) }));
  }

  /** The `k` items nearest to `vector` (cosine), nearest first; equal scores in `tieOrder`. */
  nearest(vector: readonly number[], k: number): RecallHit[] {
    const scores = this.#vectors.scores(unitVector(vector));
    const bySlot = this.#bySlot;
    /** Whether `slot` goes before `other`. */
    const ahead = (slot: number, other: number) => {
      const a = scores[slot] as number;
      const b = scores[other] as number;
      return a > b || (a === b && tieOrder((bySlot[slot] as Entry).place, (bySlot[other] as Entry).place) < 0);
    };
    const best = bestPositions(scores.length, k, ahead, (slot) => bySlot[slot] === undefined);
    return best.map((slot) => hitOf((bySlot[slot] as Entry).place, scores[slot] as number));
  }

  /**
   * The `k` items whose terms best match `query` (BM25, each word by its best form),
   * best first, equal scores in `tieOrder`; items sharing none are left out.
   */
  matching(query: readonly (string | QueryTerm)[], k: number): RecallHit[] {
    return this.#terms.search(query, k, tieOrder).map(({ value, score }) => hitOf(value, score));
  }
}
