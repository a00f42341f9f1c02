import { throughKeys } from "./encryption-keys.js";
import { type OpenedStore, openStore } from "./store-url.js";

/**
 * Opens the store of `url` (`create`: a new SQLite file or folder is fine; `keys`:
 * a key file, to see the store through `encryptStore`), runs `body`, and closes the
 * store whatever happens.
 */
export async function withStore<T>(url: string | undefined, body: (opened: OpenedStore) => Promise<T>, options: { create?: boolean; keys?: string } = {}): Promise<T> {
  const opened = await openStore(url, { create: options.create });
  opened.store = await throughKeys(opened.store, options.keys).catch(async (error: unknown) => {
    await opened.store.close().catch(() => {});
    throw error;
  });
  try {
    return await body(opened);
  } finally {
    await opened.store.close().catch(() => {});
  }
}
