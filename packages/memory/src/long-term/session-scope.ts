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
  const frozen = Object.isFrozen(session);
  // A conversation's next turn names it with a new key object: found by its encoding.
  const id = frozen ? `${name}\n${encodeSessionKey(session)}` : undefined;
  const scope = (id !== undefined && recentScopes.get(id)) || workOut(session, fields);
  if (id !== undefined) {
    if (recentScopes.size >= RECENT_LIMIT) recentScopes.clear();
    recentScopes.set(id, scope);
    const byFields = sessionScopes.get(session) ?? new Map<string, SessionScope>();
    byFields.set(name, scope);
    sessionScopes.set(session, byFields);
  }
  return scope;
}

/** Scopes of recent conversations, by fields and encoded session key (frozen values, so shared). Bounded by count. */
const recentScopes = new Map<string, SessionScope>();
const RECENT_LIMIT = 4096;

function workOut(session: SessionKey, fields: readonly string[] | undefined): SessionScope {
  const filter = scopeFilterOf(session, fields ?? Object.keys(session));
  const key = scopeKeyOf(filter);
  return Object.freeze({ filter, key, id: encodeSessionKey(key) });
}
