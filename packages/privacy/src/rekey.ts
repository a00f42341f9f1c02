import type { HistoryStore, JsonValue, SessionKeyFilter, } from "@memoria/core";
import { DATA_KEY_STATE, type DataKeys } from "./data-keys.js";

export interface RekeyProgress {
  /** Sessions looked at so far. */
  seen: number;
  /** Of those, sessions whose data key was rewrapped under the active key. */
  rewrapped: number;
}

export interface RekeyOptions {
  /** Only sessions matching these key fields (raw values; hashed here when ids are hashed). */
  filter?: SessionKeyFilter;
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
  activeKeyId: string;
}

/**
 * Walks every session (a page at a time) and rewraps its data key under the active
 * master key, under the session's turn lock so no turn writes meanwhile. Records
 * themselves stay as they are: they are sealed with the session's data key, which
 * does not change. A session already under the active key is skipped, so a run
 * that was stopped resumes where it left off.
 */
export async function rekeySessions(context: RekeyContext, filter: SessionKeyFilter, options: RekeyOptions): Promise<RekeyReport> {
  const { inner, keys, activeKeyId } = context;
  const progress: RekeyProgress = { seen: 0, rewrapped: 0 };
  let cursor: string | undefined;
  do {
    options.signal?.throwIfAborted();
    const page = await inner.list(filter, { limit: options.pageSize ?? 100, cursor });
    for (const stored of page.sessions) {
      options.signal?.throwIfAborted();
      const record = await keys.record(stored, stored);
      if (record && record.k !== activeKeyId) {
        const lock = inner.lock ? await inner.lock(stored) : undefined;
        try {
          const current = await keys.record(stored, stored); // again, under the lock
          if (current && current.k !== activeKeyId) {
            const dataKey = await keys.unwrap(stored, stored, current);
            const rewrapped = await keys.wrap(stored, { id: current.id, bytes: dataKey.key.export() }, current.key ? { key: current.key } : {});
            await inner.setState(stored, DATA_KEY_STATE, rewrapped as unknown as JsonValue, { lock });
            progress.rewrapped++;
          }
        } finally {
          await lock?.release();
        }
      }
      progress.seen++;
      options.onProgress?.({ ...progress });
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return progress;
}
