import { DEFAULT_LIST_LIMIT, type HistoryStore } from "./history-store.js";
import { SCOPE_FIELD, checkScopeFields } from "./scope-key.js";
import type { SessionKey, SessionKeyFilter } from "./session-key.js";

export interface EverySessionOptions {
  /** Sessions per `list` page. @default 100 */
  pageSize?: number;
  /**
   * Field sets whose scope records to visit besides those found from the sessions
   * listed (e.g. `[["userId"]]`): a scope record whose fields no listed conversation
   * has any more (its conversations were cleared one by one) is found only so.
   */
  scopes?: readonly (readonly string[])[];
}

async function* listed(store: Pick<HistoryStore, "list">, filter: SessionKeyFilter, pageSize: number): AsyncGenerator<SessionKey> {
  let cursor: string | undefined;
  do {
    const page = await store.list(filter, { limit: pageSize, cursor });
    yield* page.sessions;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

/** Adds the `memoriaScope` values a scope record of keys with these fields can have: each non-empty subset, sorted and joined. */
function addScopeNames(names: Set<string>, fields: readonly string[]): void {
  if (fields.length > 6) return; // 63 subsets is plenty; wider keys name their scopes in `scopes`
  for (let mask = 1; mask < 1 << fields.length; mask++) names.add(fields.filter((_, i) => mask & (1 << i)).join("+"));
}

/**
 * Every session of `store` matching `filter`, a page of `list` at a time, then the
 * scope records (long-term memory, keyed by a subset of the sessions' fields plus
 * `memoriaScope`) that match it: what export, migration, erasure and `rekey` must
 * reach, since `list` leaves scope records out unless asked for them by name.
 */
export async function* everySession(
  store: Pick<HistoryStore, "list">,
  filter: SessionKeyFilter = {},
  options: EverySessionOptions = {},
): AsyncGenerator<SessionKey> {
  const pageSize = options.pageSize ?? DEFAULT_LIST_LIMIT;
  // Named scopes are checked (and sorted) as a memory's `scope` is, before anything is listed.
  const names = new Set((options.scopes ?? []).map((fields) => (checkScopeFields(fields, "scopes") as readonly string[]).join("+")));
  const fieldSets = new Set<string>();
  for await (const key of listed(store, filter, pageSize)) {
    const fields = Object.keys(key).sort();
    const set = fields.join("+");
    if (!fieldSets.has(set)) addScopeNames(names, fields);
    fieldSets.add(set);
    yield key;
  }
  if (Object.hasOwn(filter, SCOPE_FIELD)) return; // the filter named scope records: listed above
  for (const name of [...names].sort()) {
    const fields = name.split("+");
    // A scope record's key holds all of the filter's fields, so its scope names them all.
    if (Object.keys(filter).every((field) => fields.includes(field))) yield* listed(store, { ...filter, [SCOPE_FIELD]: name }, pageSize);
  }
}
