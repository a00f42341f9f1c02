import { type OpenedStore, openStore } from "./store-url.js";

/** Opens the store of `url` (`create`: a new SQLite file or folder is fine), runs `body`, and closes the store whatever happens. */
export async function withStore<T>(url: string | undefined, body: (opened: OpenedStore) => Promise<T>, create = false): Promise<T> {
  const opened = await openStore(url, { create });
  try {
    return await body(opened);
  } finally {
    await opened.store.close().catch(() => {});
  }
}
