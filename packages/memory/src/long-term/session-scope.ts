import { type SessionKey, type SessionKeyFilter, encodeSessionKey, scopeFilterOf, scopeKeyOf } from "@memoria/core";

export interface SessionScope {
  filter: SessionKeyFilter;
  /** The scope record's key, and the same encoded. */
  key: SessionKey;
  id: string;
}

/** Scopes of recent conversations, by fields and encoded session key (frozen values, so shared). Bounded by count. */
const recentScopes = new Map<string, SessionScope>();
const RECENT_LIMIT = 4096;

/**
 * The scope `session` belongs to under `fields` (the session itself without fields).
 * A frozen key's scope is worked out once and found again by its encoding: by every
 * strategy of a turn, to load and after saving, and on the conversation's next turns.
 * A key that can change is worked out every time.
 */
export function scopeOfSession(session: SessionKey, fields: readonly string[] | undefined): SessionScope {
  if (!Object.isFrozen(session)) return workOut(session, fields);
  const id = `${fields ? fields.join("+") : ""}\n${encodeSessionKey(session)}`;
  let scope = recentScopes.get(id);
  if (scope === undefined) {
    scope = workOut(session, fields);
    if (recentScopes.size >= RECENT_LIMIT) recentScopes.clear();
    recentScopes.set(id, scope);
  }
  return scope;
}

function workOut(session: SessionKey, fields: readonly string[] | undefined): SessionScope {
  const filter = scopeFilterOf(session, fields ?? Object.keys(session));
  const key = scopeKeyOf(filter);
  return Object.freeze({ filter, key, id: encodeSessionKey(key) });
}
