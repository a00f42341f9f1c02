import { StoreUnavailableError, type WriteOutcome } from "@memoria/core";

/**
 * Runs a call to something the encrypted store relies on outside its store (a key
 * source, a key vault, a freshness anchor). Its failure is the store's kind of
 * failure: a `StoreUnavailableError` whose message is `failed` and the cause's
 * own message, with what the write it belonged to may have done.
 */
export async function outsideCall<T>(failed: string, outcome: WriteOutcome, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(`${failed}: ${reason}.`, { cause: error, outcome });
  }
}
