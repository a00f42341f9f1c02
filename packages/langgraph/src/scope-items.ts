import { type HistoryStore, type JsonValue, type SessionKey, encodeSessionKey } from "@memoria/core";
import { randomId } from "@memoria/core/store-kit";
import { unitVector } from "@memoria/recall";
import { type Renewal, parseRenewal, renewalName } from "./item-ttl.js";
import { ITEM_PREFIX, type ItemRecord, parseItem } from "./store-items.js";

/** An item where it is stored: its scope record and state name, and its renewal if a read renewed it. */
export interface Entry {
  key: SessionKey;
  name: string;
  record: ItemRecord;
  renewal?: Renewal;
}

/** The state value every write to a scope's items changes (a fresh random id): a held copy is current while the scope's is the one it was read at. */
const VERSION = "lg.v";
/** How many vector components (4 bytes each) the held scopes may hold in all, the least recently read dropped first: 32 MiB. */
const HELD_FLOATS = 8 * 1024 * 1024;

/**
 * A `MemoriaStore`'s reads and writes of its scopes' items. A scope's items live in
 * its scope record's state, one value each, with their vectors: an item and what
 * finds it are written in one step, so no write can leave one without the other.
 * Searching a scope reads all of them, so the items of recently searched scopes are
 * held here, opened (and their vectors as unit vectors), and used again while the
 * scope's version is the one they were read at: every write sets a new version, in
 * the same `setStates` step where the store has it, and erasing the scope removes
 * it. A search of a held scope then costs one small state read, and sees every
 * write made since, by any process.
 */
export class ScopeItems {
  readonly #held = new Map<string, { version: string; entries: Entry[]; floats: number }>();
  readonly #units = new WeakMap<ItemRecord, Float32Array[]>();
  #heldFloats = 0;

  constructor(private readonly store: HistoryStore) {}

  /** Every item of the scope that holds a value, expired or not, with its renewal. */
  async entries(key: SessionKey): Promise<Entry[]> {
    const id = encodeSessionKey(key);
    // The version is read before the items: items held under it are never older than it says.
    const version = await this.store.getState(key, VERSION);
    const held = this.#held.get(id);
    if (held && held.version === version) {
      this.#held.delete(id); // most recently read last
      this.#held.set(id, held);
      return held.entries;
    }
    const state = await this.store.getAllState(key);
    const entries: Entry[] = [];
    let floats = 0;
    for (const [name, value] of Object.entries(state)) {
      if (!name.startsWith(ITEM_PREFIX)) continue;
      const parsed = parseItem(value, name);
      if (!parsed?.value) continue;
      // Held without its vectors, which are kept as unit vectors: searches compare them as they are.
      const { vectors, ...record } = parsed;
      if (vectors) {
        const units = vectors.map((vector) => unitVector(vector));
        for (const unit of units) floats += unit.length;
        this.#units.set(record, units);
      }
      entries.push({ key, name, record, renewal: parseRenewal(state[renewalName(name)]) });
    }
    this.#drop(id);
    if (typeof version === "string" && floats <= HELD_FLOATS) {
      this.#held.set(id, { version, entries, floats });
      this.#heldFloats += floats;
      while (this.#heldFloats > HELD_FLOATS) this.#drop(this.#held.keys().next().value as string);
    }
    return entries;
  }

  #drop(id: string): void {
    const held = this.#held.get(id);
    if (!held) return;
    this.#held.delete(id);
    this.#heldFloats -= held.floats;
  }

  /** Writes state values of a scope (items, renewals) with a new version, in one step where the store can. */
  async write(key: SessionKey, values: Record<string, JsonValue>): Promise<void> {
    this.#drop(encodeSessionKey(key)); // whatever happens next, this copy may be behind
    await this.store.setStates(key, { ...values, [VERSION]: randomId() });
  }

  /** The vectors of an item `entries` returned, scaled to length 1. */
  unitVectors(record: ItemRecord): readonly Float32Array[] {
    return this.#units.get(record) ?? [];
  }
}
