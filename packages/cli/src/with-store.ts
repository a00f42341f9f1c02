import { MemoriaError } from "@memoria/core";
import { throughKeys } from "./encryption-keys.js";
import { type OpenedStore, openStore } from "./store-url.js";

/**
 * Opens the store of `url` (`create`: a new SQLite file or folder is fine; `keys`:
 * a key file, to see the store through `encryptStore`), runs `body`, and closes the
 * store whatever happens.
 */
export async function withStore<T>(
  url: string | undefined,
  body: (opened: OpenedStore) => Promise<T>,
  options: { create?: boolean; keys?: string } = {},
): Promise<T> {
  const opened = await openStore(url, { create: options.create });
  opened.store = await throughKeys(opened.store, options.keys).catch(async (error: unknown) => {
    await opened.store.close().catch(() => {});
    throw error;
  });
  try {
    return await body(opened);
  } catch (error) {
    // The app encrypts this store, and the command was not given its keys.
    if (options.keys === undefined && (error as { reason?: unknown })?.reason === "sealed" && MemoriaError.isInstance(error)) {
      throw new MemoriaError(error.code, `${error.message} Pass --keys <file> with the app's master keys (docs/cli.md, "Encrypted stores").`, { cause: error });
    }
    throw error;
  } finally {
    await opened.store.close().catch(() => {});
  }
}
