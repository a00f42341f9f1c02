import type { HistoryStore, RecallIndex } from "@memoria/core";
import { exactIndex } from "@memoria/recall";

const byStore = new WeakMap<HistoryStore, RecallIndex>();

/**
 * The recall index a store gets when a memory is given none: the store's own
 * (`store.recallIndex()`: the SQL store's table, sqlite-vec on SQLite; an encrypted
 * store's sealed index, through any wrapper), else one exact in-process
 * index per store, shared by every memory that uses it (items are filed by scope).
 */
export function defaultIndex(store: HistoryStore): RecallIndex {
  let index = byStore.get(store);
  if (!index) {
    index = store.recallIndex() ?? exactIndex();
    byStore.set(store, index);
  }
  return index;
}
