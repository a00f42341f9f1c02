/**
 * One embedded message: which scope it is recalled in, where it sits (its
 * session's encoded key and its position there), when it was indexed, and its
 * vector. An index keeps no message text: the text stays in the history store (and
 * under its encryption), and is read from there when a hit is shown.
 */
export interface RecallItem {
  /** The encoded key of the scope record (`encodeSessionKey(scopeKeyOf(…))`). */
  scope: string;
  /** The encoded key of the message's session. */
  session: string;
  /** The message's position in its session (0 for the first). */
  position: number;
  /** When the message was indexed (epoch ms): what retention and dates go by. */
  at: number;
  vector: readonly number[];
  /**
   * The message's terms as the lexical index keeps them (recall memory makes them:
   * its words lowercased, stop words out, lightly stemmed, then a `~topic` term per
   * topic they touch), repeats kept: what `searchTerms` ranks by. Left out, the item
   * is found by its vector alone.
   */
  terms?: readonly string[];
}

export interface RecallHit {
  session: string;
  position: number;
  at: number;
  /** From `search`: cosine similarity to the query, from -1 to 1. From `searchTerms`: the BM25 score, 0 or more. Higher is nearer. */
  score: number;
}

/**
 * A word of a lexical query with what may stand in for it (a synonym, a topic):
 * an item scores the best of the word's own BM25 share and each alternative's
 * times its weight, so one word counts once however many of its forms an item holds.
 */
export interface QueryTerm {
  term: string;
  alternatives?: readonly { term: string; weight: number }[];
}

/** Which items `remove` drops: every given condition must hold. */
export interface RecallSelector {
  scope?: string;
  /** Items of these sessions (encoded keys). */
  sessions?: readonly string[];
  /** Items indexed before this time (epoch ms). */
  before?: number;
}

/**
 * Where recall memory keeps its vectors: small enough to put in front of sqlite-vec,
 * any LangChain `VectorStore`, or an exact in-process scan.
 */
export interface RecallIndex {
  /** A short name for messages and benchmarks, e.g. `"sqlite-vec"`. */
  readonly name: string;
  /** Adds items; an item with the session and position of one already held replaces it, so a repeated batch adds nothing. */
  upsert(items: readonly RecallItem[]): Promise<void>;
  /** The `k` items of `scope` nearest to `vector`, nearest first. */
  search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]>;
  /**
   * The `k` items of `scope` whose terms best match `query`, by BM25 (Okapi BM25 with
   * `BM25_K1` and `BM25_B`, over the scope's items; a word given twice counts once;
   * a `QueryTerm` scores its best form), best first; items sharing no term are not
   * returned. Optional: an index without it is searched by vector alone.
   */
  searchTerms?(scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]>;
  /** Removes the items the selector names (at least one condition); resolves with how many. */
  remove(selector: RecallSelector): Promise<number>;
  /**
   * Where the items live, as an id kept with them (the SQL store's: one per database,
   * so a copy of the database file keeps it and a copy of its sessions into another
   * database, e.g. by `memoria migrate`, does not). Recall notes it in its progress
   * and starts a scope again when the index it finds is not the one its progress was
   * made in. Optional: without it, the progress is trusted.
   */
  home?(): Promise<string>;
}
