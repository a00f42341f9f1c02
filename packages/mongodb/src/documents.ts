import type { Collection } from "mongodb";

/** The documents of the MongoDB store: one per session, one per message, a marker per stored turn, one per state value. */

export interface Lock {
  o: string;
  x: number;
}

/** One session: its key, the committed message count, and its locks. */
export interface SessionDoc {
  _id: string;
  k: Record<string, string>;
  /** `field=value` strings of the key, indexed: `list` and `delete` by any field. */
  kf: string[];
  /** Messages with `q < n` are committed; a crash may leave more, which no one reads. */
  n: number;
  /** Messages with `q < b` were trimmed (compaction). */
  b?: number;
  /** A turn being written: its id and the sequence range it takes. */
  pending?: { t: string; from: number; to: number } | null;
  /** The short append lock, and the long turn lock. */
  lock?: Lock | null;
  turn?: Lock | null;
  /**
   * Expiry (epoch ms), or null for never. 0 marks a document no write has
   * committed to yet (made by a lock) or a cleared session: it is not listed.
   */
  e?: number | null;
  /** Created and last active (epoch ms); null once cleared. */
  c?: number | null;
  a?: number | null;
  /** Title, and metadata as JSON text. */
  ti?: string | null;
  md?: string | null;
}

/** What a session starting afresh (cleared, or expired) forgets besides its messages. */
export const NO_INFO = { c: null, a: null, ti: null, md: null } as const;

export interface MessageDoc {
  s: string;
  q: number;
  /** The message as codec JSON text: keys holding `$` or `.` stay data. */
  p: string;
}

export interface MarkerDoc {
  _id: string;
  s: string;
}

export interface StateDoc {
  _id: string;
  s: string;
  v: string;
}

/** The store's four collections. */
export interface Collections {
  sessions: Collection<SessionDoc>;
  messages: Collection<MessageDoc>;
  turns: Collection<MarkerDoc>;
  state: Collection<StateDoc>;
}
