import type { HistoryStore } from "@memoria/core";
import { afterAll, beforeAll } from "vitest";
import type { StoreSuiteSetup } from "./types.js";

/** One store for a describe block: created before its tests, closed after them. */
export function useStore(setup: StoreSuiteSetup): () => HistoryStore {
  let store: HistoryStore | undefined;
  beforeAll(async () => {
    store = await setup.createStore();
  });
  afterAll(async () => {
    if (store) await (setup.destroyStore ? setup.destroyStore(store) : store.close());
  });
  return () => {
    if (!store) throw new Error(`${setup.name}: the store was not created (see the beforeAll error above)`);
    return store;
  };
}

/** Runs `body` with extra stores, closing them whatever happens. */
export async function withStores<T>(stores: HistoryStore[], body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}
