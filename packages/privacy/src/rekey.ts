import type { HistoryStore, JsonValue, SessionKey, SessionKeyFilter } from "@memoria/core";
import { DATA_KEY_STATE, type DataKeys } from "./data-keys.js";

export interface RekeyProgress {
  /** Sessions and scope records looked at so far. */
  seen: number;
  /** Of those, the ones whose data key was rewrapped under the active key. */
  rewrapped: number;
  /** With per-scope keys: the scope keys rewrapped in the vault under the active master key. */
  scopeKeys?: number;
}

export interface RekeyOptions {
  /** Only sessions (and scope records) matching these key fields (raw values; hashed here when ids are hashed). */
  filter?: SessionKeyFilter;
  /**
   * Field sets of scope records (long-term memory) to rekey besides those found
   * from the sessions listed: needed only for a scope whose conversations were all
   * cleared one by one, e.g. `[["userId"]]`.
   */
  scopes?: readonly (readonly string[])[];
  /** Called after each session. */
  onProgress?: (progress: RekeyProgress) => void;
  signal?: AbortSignal;
  /** Sessions per `list` page. @default 100 */
  pageSize?: number;
}

/** What a finished run did; every session it saw is now under the active key. */
export type RekeyReport = RekeyProgress;

export interface RekeyContext {
  inner: HistoryStore;
  keys: DataKeys;
}

/**
 * Rewraps the data key of every session `stored` yields (keys as the inner store
 * holds them: conversations and scope records alike) where new data keys are
 * wrapped: under its scope's key when the store has per-scope keys and the session
 * names that scope (so turning them on reaches sessions written before), else under
 * the active master key. It runs under the session's turn lock so no turn writes
 * meanwhile. Records, state, titles and metadata stay as they are: they are sealed
 * with the session's data key, which does not change. Each scope key met is itself
 * rewrapped in the vault under the active master key. A session already done is
 * skipped, so a run that was stopped resumes where it left off.
 */
export async function rekeySessions(context: RekeyContext, stored: AsyncIterable<SessionKey>, options: RekeyOptions): Promise<RekeyReport> {
  const { inner, keys } = context;
  const progress: RekeyProgress = keys.scopes ? { seen: 0, rewrapped: 0, scopeKeys: 0 } : { seen: 0, rewrapped: 0 };
  const scopesDone = new Set<string>();
  options.signal?.throwIfAborted();
  for await (const key of stored) {
    options.signal?.throwIfAborted();
    const record = await keys.record(key, key);
    if (record && !keys.isWrappedAsNew(key, record)) {
      const lock = await inner.lock(key);
      try {
        const current = await keys.record(key, key); // again, under the lock
        if (current && !keys.isWrappedAsNew(key, current)) {
          const dataKey = await keys.unwrap(key, key, current);
          const rewrapped = await keys.wrap(key, { id: current.id, bytes: dataKey.key.export() }, { key: current.key, m: current.m });
          await inner.setState(key, DATA_KEY_STATE, rewrapped as unknown as JsonValue, { lock });
          progress.rewrapped++;
        }
      } finally {
        await lock.release();
      }
    }
    const scope = keys.scopes?.nameOf(key);
    if (scope !== undefined && !scopesDone.has(scope)) {
      scopesDone.add(scope);
      if (await keys.scopes!.rewrap(key, scope)) progress.scopeKeys = (progress.scopeKeys ?? 0) + 1;
    }
    progress.seen++;
    options.onProgress?.({ ...progress });
  }
  return progress;
}
