import type { FreshnessAnchor } from "./freshness-anchor.js";
import type { KeyMaterial, KeySource } from "./key-ring.js";
import type { ScopeKeyOptions } from "./scope-keys.js";

export interface EncryptionOptions {
  /**
   * Master keys by id (32 bytes each, as bytes or base64 text), or a function that
   * fetches a key by id (from a KMS). Keep every key that sealed data not yet
   * rekeyed; drop a key once `rekey()` reports nothing left under it.
   */
  keys: KeySource;
  /** The key that seals new data keys. */
  activeKeyId: string;
  /**
   * Store session-key values as keyed hashes (HMAC-SHA-256 under `secret`, 32 bytes
   * or more) instead of raw ids. Lookups and `list` / `delete` by a field keep
   * working; `list` gives back the raw keys, which are sealed in each session.
   * The secret cannot be rotated: a new secret names other sessions.
   */
  hashIds?: { secret: KeyMaterial };
  /** How many sessions' data keys stay unwrapped in memory. @default 10_000 */
  cacheSize?: number;
  /**
   * Characters of opened message text kept in memory, so a windowed read opens only
   * the records it has not opened before (most of a window was read last turn).
   * The text never leaves the process; 0 turns the cache off. @default 4_000_000
   */
  plaintextCache?: number;
  /**
   * Give every read the same deeply frozen message for each record the plaintext
   * cache holds, decoded once (in a new array each read), as the in-memory and file
   * stores do: changing a message a read returned throws a `TypeError`. Set it to
   * `false` for code that edits the messages it reads (LangGraph's
   * `messagesStateReducer` gives an id, in place, to each message that has none):
   * every read then gets copies of its own, at about a third more time per whole read.
   * @default true
   */
  frozen?: boolean;
  /**
   * Where the newest head of each session is kept outside the store (see
   * `storeAnchor`), so that a store rolled back whole to an older consistent point
   * is refused (`IntegrityError` "truncated" / "rolled-back"). Without one, records
   * cut from a write, records of two points in time, and records an edit replaced
   * are still refused, and so is anything older than this process saw.
   * One more call per write (after it) and per read (alongside it).
   */
  anchor?: FreshnessAnchor;
  /**
   * Per-scope keys, for crypto-shredding: every session and scope record whose key
   * has `field` (e.g. `userId`) gets its data key sealed under that value's own
   * key, kept in `vault` (outside the store, sealed under the master key).
   * `delete({ [field]: value })` destroys the key, so every copy of that scope's
   * data the engine keeps becomes unreadable at once. Costs one vault read per new
   * session, none per turn.
   */
  scopeKeys?: ScopeKeyOptions;
}
