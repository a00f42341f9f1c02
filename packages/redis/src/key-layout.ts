import { MemoriaError, type SessionKey, encodeSessionKey } from "@memoria/core";

/**
 * Where a store's data lives in Redis. Every key starts with the prefix; a
 * session's keys share the hash tag `{<encoded session key>}`, so on a Cluster they
 * sit in one slot and one Lua script can touch them all. The encoded key holds only
 * `[A-Za-z0-9_.%=&-]`, so ids holding `*`, `:`, `{`, `}`, spaces or newlines can
 * neither break the tag nor collide.
 *
 *   <prefix>{<session>}:m   list of messages (codec JSON), in order
 *   <prefix>{<session>}:t   set of stored turn ids
 *   <prefix>{<session>}:k   the session key as JSON
 *   <prefix>{<session>}:s   hash of derived state (memory strategies), name → JSON
 *   <prefix>{<session>}:l   the turn lock (owner token, with a PX expiry)
 *   <prefix>{<session>}:i   hash of conversation info: c created, a last active (epoch ms), ti title, md metadata
 *   <prefix>idx:{<field>=<value>}   sorted set of the sessions with that field value (all scores 0: by name)
 *   <prefix>idx:{*}                 sorted set of all sessions
 *   <prefix>rec:{<field>=<value>}   the same sessions scored by last activity (epoch ms): `recent`
 *   <prefix>rec:{*}                 all sessions by last activity
 * An `idx` set and its `rec` twin share a hash tag, so one script writes both.
 */
export interface KeyLayout {
  prefix: string;
  session(id: string): { messages: string; turns: string; key: string; state: string; lock: string; info: string };
  /** The index sets a session belongs to: one per key field, and the global one. */
  indexes(key: SessionKey): string[];
  /** The activity set beside an index set. */
  recentOf(index: string): string;
  fieldIndex(field: string, value: string): string;
  allSessions: string;
}

const BAD_PREFIX = /[{}\u0000-\u001f\u007f]/;

export function keyLayout(prefix: string): KeyLayout {
  if (typeof prefix !== "string" || prefix.length === 0 || prefix.length > 64 || BAD_PREFIX.test(prefix)) {
    throw new MemoriaError("INVALID_ARGUMENT", `keyPrefix must be 1 to 64 characters without braces or control characters, got ${JSON.stringify(prefix)}.`);
  }
  const fieldIndex = (field: string, value: string) => `${prefix}idx:{${encodeSessionKey({ [field]: value })}}`;
  return {
    prefix,
    session(id) {
      const base = `${prefix}{${id}}`;
      return { messages: `${base}:m`, turns: `${base}:t`, key: `${base}:k`, state: `${base}:s`, lock: `${base}:l`, info: `${base}:i` };
    },
    recentOf: (index) => `${prefix}rec:${index.slice(prefix.length + "idx:".length)}`,
    indexes: (key) => [...Object.keys(key).map((field) => fieldIndex(field, key[field] as string)), `${prefix}idx:{*}`],
    fieldIndex,
    allSessions: `${prefix}idx:{*}`,
  };
}
