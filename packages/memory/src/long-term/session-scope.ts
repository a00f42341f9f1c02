import { type SessionKey, type SessionKeyFilter, encodeSessionKey, scopeFilterOf, scopeKeyOf } from "@memoria/core";

export interface SessionScope {
  filter: SessionKeyFilter;
  /** The scope record's key, and the same encoded. */
  key: SessionKey;
  id: string;
}

/** Scopes worked out for a session key object, by the fields that scope them. */
const sessionScopes = new WeakMap<SessionKey, Map<string, SessionScope>>();

/**
 * The scope `session` belongs to under `fields` (the session itself without fields).
 * A frozen key (the one a turn hands every strategy, to load and after saving) has
 * its scope worked out once per turn, not once per call.
 */
export function scopeOfSession(session: SessionKey, fields: readonly string[] | undefined): SessionScope {
  const name = fields ? fields.join("+") : "";
  const known = sessionScopes.get(session)?.get(name);
  if (known) return known;
  const filter = scopeFilterOf(session, fields ?? Object.keys(session));
  const key = scopeKeyOf(filter);
  const scope = { filter, key, id: encodeSessionKey(key) };
  if (Object.isFrozen(session)) {
    const byFields = sessionScopes.get(session) ?? new Map<string, SessionScope>();
    byFields.set(name, scope);
    sessionScopes.set(session, byFields);
  }
  return scope;
}
