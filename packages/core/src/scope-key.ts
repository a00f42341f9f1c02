import { InvalidSessionKeyError, MemoriaError } from "./errors.js";
import { SCOPE_FIELD, type SessionKey, type SessionKeyFilter, createSessionKey, keyMatches } from "./session-key.js";

export { SCOPE_FIELD };

/** Checks the fields a memory is scoped to (`scope: ["userId"]`); returns them sorted. */
export function checkScopeFields(fields: readonly string[] | undefined, what: string): readonly string[] | undefined {
  if (fields === undefined) return undefined;
  if (!Array.isArray(fields) || fields.length === 0 || fields.some((field) => typeof field !== "string")) {
    throw new MemoriaError("INVALID_ARGUMENT", `${what}: scope must be a non-empty array of session field names, e.g. ["userId"].`);
  }
  if (fields.includes(SCOPE_FIELD)) throw new MemoriaError("INVALID_ARGUMENT", `${what}: "${SCOPE_FIELD}" is reserved and cannot scope a memory.`);
  if (new Set(fields).size !== fields.length) throw new MemoriaError("INVALID_ARGUMENT", `${what}: scope names a field twice.`);
  return Object.freeze([...fields].sort());
}

/**
 * The partial key a session belongs to under `fields`: `{ userId: "ada" }` for the
 * session `{ userId: "ada", conversationId: "c1" }` and the scope `["userId"]`.
 */
export function scopeFilterOf(key: SessionKey, fields: readonly string[]): SessionKeyFilter {
  const filter: Record<string, string> = {};
  for (const field of fields) {
    const value = key[field];
    if (value === undefined) {
      throw new InvalidSessionKeyError(field, `the memory is scoped to ${JSON.stringify(fields)}, but the session key has no "${field}"`);
    }
    filter[field] = value;
  }
  return Object.freeze(filter);
}

/** Where the scope `filter` keeps its records: the filter plus {@link SCOPE_FIELD} naming its fields. */
export function scopeKeyOf(filter: SessionKeyFilter): SessionKey {
  const fields = Object.keys(filter).sort();
  if (fields.length === 0) throw new MemoriaError("INVALID_ARGUMENT", 'A scope needs at least one field, e.g. { userId: "ada" }.');
  if (fields.includes(SCOPE_FIELD)) return createSessionKey(filter);
  return createSessionKey({ ...filter, [SCOPE_FIELD]: fields.join("+") });
}

/** True for a scope record's key. */
export function isScopeKey(key: SessionKey): boolean {
  return Object.hasOwn(key, SCOPE_FIELD);
}

/**
 * True when `list` / `recent` with `filter` should show the key: it matches, and it
 * is a conversation, or the filter asks for scope records by naming {@link SCOPE_FIELD}.
 */
export function listedBy(key: SessionKey, filter: SessionKeyFilter): boolean {
  return keyMatches(key, filter) && (!isScopeKey(key) || Object.hasOwn(filter, SCOPE_FIELD));
}

/** Drops scope records from a page a store built without looking at keys' fields. */
export function withoutScopes<T>(items: T[], keyOf: (item: T) => SessionKey, filter: SessionKeyFilter | undefined): T[] {
  if (filter && Object.hasOwn(filter, SCOPE_FIELD)) return items;
  return items.some((item) => isScopeKey(keyOf(item))) ? items.filter((item) => !isScopeKey(keyOf(item))) : items;
}
