import type { HistoryStore, RecallIndex } from "@memoria/core";
import { exactIndex } from "./exact-index.js";

const byStore = new WeakMap<HistoryStore, RecallIndex>();

/**
 * The recall index a store gets when a memory is given none: the store's own (the
 * SQL store's `recallIndex()`, sqlite-vec on SQLite), else one exact in-process
 * index per store, shared by every memory that uses it (items are filed by scope).
 */
export function defaultIndex(store: HistoryStore): RecallIndex {
  let index = byStore.get(store);
  if (!index) {
    const own = (store as Partial<{ recallIndex(): RecallIndex }>).recallIndex;
    index = typeof own === "function" ? own.call(store) : exactIndex();
    byStore.set(store, index);
  }
  return index;
}
