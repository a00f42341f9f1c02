import type { QueryTerm, RecallHit, RecallIndex, RecallItem, RecallSelector } from "@memoria/core";
import { HeldRecallItems, checkRecallK, checkRecallSelector, dotProduct, sortedFew, tieOrder, unitVector } from "@memoria/recall";
import type { Tables } from "./schema.js";
import { type LoadedScope, RecallScopeCache, heldBytes } from "./recall-scope-cache.js";
import { searchTerms, writeTerms } from "./recall-terms.js";
import { scopeVersion, scopeVersionNow } from "./recall-versions.js";
import { type SqlDialect, all, run } from "./sql-dialect.js";
import type { SqlForms } from "./sql-forms.js";

/** The recall index of a SQL store, which the store tells when it erased sessions. */
export interface SqlRecallIndex extends RecallIndex {
  /** Lets go of every scope held in this process. */
  forget(): void;
}

interface HitRow {
  session_id: string;
  position: number | string;
  at: number | string;
  distance?: number;
  embedding?: Uint8Array;
}

/** A vector as the bytes sqlite-vec reads: little-endian 32-bit floats. */
function bytesOf(vector: readonly number[]): Buffer {
  const unit = unitVector(vector);
  return Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
}

function floatsOf(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes); // aligned for Float32Array
  return new Float32Array(copy.buffer, 0, copy.byteLength >> 2);
}

/**
 * Recall memory's index in the store's own database: one row per embedded message,
 * keyed by its session and position, whose foreign key erases it with the session
 * (`clear`, `delete`, expiry), in the same transaction, on the same zeroed pages;
 * its terms (recall-terms.ts) hang off that row by a foreign key of their own.
 * SQLite ranks with sqlite-vec's `vec_distance_cosine` in the engine; PostgreSQL
 * (no pgvector here) reads the scope's vectors and ranks them in the process.
 * Plain rows rather than a `vec0` table: erasure needs no extension loaded, and a
 * deleted row's bytes are zeroed by `secure_delete` like every other row's.
 */
export function recallTable(dialect: SqlDialect, t: Tables, ready: () => Promise<void>): SqlRecallIndex {
  // An erased session's messages are not indexed: the row would have nothing to belong to.
  const upsert = `INSERT INTO ${t.recall} (session_id, position, scope_id, at, embedding, terms)
    SELECT ?, ?, ?, ?, ?, ${dialect.forms.param("bigint")} WHERE EXISTS (SELECT 1 FROM ${t.sessions} WHERE id = ?)
    ${dialect.forms.upsert(["session_id", "position"], ["scope_id", "at", "embedding", "terms"])}`;
  let home: Promise<string> | undefined;
  // Scopes are held where the engine keeps their versions and can read an item's terms as one JSON row.
  const pairs = dialect.forms.jsonPairs;
  const cache =
    dialect.features.recallCacheBytes && pairs
      ? new RecallScopeCache(dialect.features.recallCacheBytes, (scope, version, budget) => loadScope(dialect, pairs, t, scope, version, budget))
      : undefined;
  /** The scope as held in this process, where it is and is current; a scope with no version (no items, or none yet stamped) is ranked in SQL. */
  const held = async (scope: string) => {
    if (!cache) return undefined;
    const version = await scopeVersion(dialect, t, scope);
    return version === 0 ? undefined : cache.at(scope, version);
  };
  return {
    name: dialect.engine === "sqlite" ? "sqlite-vec" : "sql-scan",
    home() {
      home ??= ready()
        .then(() => dialect.driver.execute<unknown[]>({ kind: "column", sql: `SELECT home FROM ${t.version}`, params: [] }))
        .then(([id]) => `sql:${String(id)}`);
      home.catch(() => {
        home = undefined; // asked again next time
      });
      return home;
    },
    async upsert(items: readonly RecallItem[]) {
      if (items.length === 0) return;
      await ready();
      // The scopes this process holds or saw: their versions are read around the write, to keep them current, the
      // first read locking each version row (in one order, so two writers cannot deadlock) where transactions overlap.
      const scopes = cache ? [...new Set(items.map((item) => item.scope))].filter((scope) => cache.watches(scope)).sort() : [];
      const sessions = [...new Set(items.map((item) => item.session))];
      const { before, after, stored } = await dialect.driver.transaction(function* () {
        // The sessions first, then the scopes' versions, as an erasure takes them: a session erased at once is either
        // gone before this reads it (its items are skipped) or erased after this commits (its items with it).
        if (dialect.forms.forKeyShare)
          yield* all(`SELECT id FROM ${t.sessions} WHERE id IN (${sessions.map(() => "?").join(", ")})${dialect.forms.forKeyShare}`, sessions);
        const versions = function* (lock?: string) {
          const found: number[] = [];
          for (const scope of scopes) found.push(yield* scopeVersionNow(t, scope, lock));
          return found;
        };
        const before = yield* versions(dialect.forms.forUpdate);
        const stored: RecallItem[] = [];
        for (const item of items) {
          const changed = yield* run(upsert, [
            item.session,
            item.position,
            item.scope,
            item.at,
            bytesOf(item.vector),
            item.terms ? item.terms.length : null,
            item.session,
          ]);
          if (changed > 0) stored.push(item);
          yield* writeTerms(dialect, t, item);
        }
        return { before, after: yield* versions(), stored };
      });
      for (const [i, scope] of scopes.entries()) {
        cache?.written(
          scope,
          before[i] as number,
          after[i] as number,
          stored.filter((item) => item.scope === scope),
        );
      }
    },
    async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      if (k === 0) return [];
      await ready();
      const items = await held(scope);
      if (items) return items.nearest(vector, k);
      const query = bytesOf(vector);
      if (dialect.forms.vectorDistance) {
        const rows = await dialect.driver.execute<HitRow[]>({
          kind: "all",
          sql: `SELECT session_id, position, at, ${dialect.forms.vectorDistance("embedding")} AS distance FROM ${t.recall} WHERE scope_id = ? ORDER BY distance, session_id DESC, position DESC LIMIT ?`,
          params: [query, scope, k],
        });
        return rows.map((row) => ({ session: row.session_id, position: Number(row.position), at: Number(row.at), score: 1 - Number(row.distance) }));
      }
      const rows = await dialect.driver.execute<HitRow[]>({
        kind: "all",
        sql: `SELECT session_id, position, at, embedding FROM ${t.recall} WHERE scope_id = ?`,
        params: [scope],
      });
      const q = unitVector(vector);
      return rows
        .map((row) => ({
          session: row.session_id,
          position: Number(row.position),
          at: Number(row.at),
          score: dotProduct(floatsOf(row.embedding as Uint8Array), q),
        }))
        .sort((a, b) => b.score - a.score || tieOrder(a, b))
        .slice(0, k);
    },
    async searchTerms(scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      await ready();
      const items = await held(scope);
      if (!items) return searchTerms(dialect, t, scope, query, k);
      // As the SQL ranks: the best k, equal scores in tieOrder; then newest first, ties in tieOrder again.
      const hits = items.matching(query, k);
      return sortedFew(hits, (a, b) => b.score - a.score || b.at - a.at || tieOrder(a, b));
    },
    async remove(selector: RecallSelector): Promise<number> {
      checkRecallSelector(selector);
      const where: string[] = [];
      const params: unknown[] = [];
      if (selector.scope !== undefined) where.push("scope_id = ?") && params.push(selector.scope);
      if (selector.before !== undefined) where.push("at < ?") && params.push(selector.before);
      if (selector.sessions !== undefined) {
        if (selector.sessions.length === 0) return 0;
        where.push(`session_id IN (${selector.sessions.map(() => "?").join(", ")})`);
        params.push(...selector.sessions);
      }
      await ready();
      const removed = await dialect.driver.execute<number>({ kind: "run", sql: `DELETE FROM ${t.recall} WHERE ${where.join(" AND ")}`, params });
      // What was removed goes from this process too: its scope, or every scope where the selector names none.
      // Nothing removed (recall's retention pass, most of the time), nothing let go.
      if (removed > 0) cache?.forget(selector.scope);
      await dialect.driver.afterErase();
      return removed;
    },
    forget: () => cache?.forget(),
  };
}

interface ItemRow {
  session_id: string;
  position: number | string;
  at: number | string;
  embedding: Uint8Array;
  terms: number | string | null;
  /** The item's terms and their counts, as JSON: `[["harbour", 2], …]`. */
  counts: string;
}

/**
 * Reads a scope into the process at `version`: "too large" where holding it would
 * take more than `budget` bytes, undefined where it changed while it was read.
 */
async function loadScope(
  dialect: SqlDialect,
  pairs: NonNullable<SqlForms["jsonPairs"]>,
  t: Tables,
  scope: string,
  version: number,
  budget: number,
): Promise<LoadedScope | "too large" | undefined> {
  const [size] = await dialect.driver.execute<{ items: number; vectors: number | null; terms: number | null }[]>({
    kind: "all",
    sql: `SELECT COUNT(*) AS items, SUM(length(embedding)) AS vectors, SUM(terms) AS terms FROM ${t.recall} WHERE scope_id = ?`,
    params: [scope],
  });
  const bytes = heldBytes(Number(size?.items ?? 0), Number(size?.vectors ?? 0), Number(size?.terms ?? 0));
  if (bytes > budget) return "too large";
  // Each item with its terms in one row (by the terms' item index), rather than a row per term.
  const rows = await dialect.driver.execute<ItemRow[]>({
    kind: "all",
    sql: `SELECT r.session_id, r.position, r.at, r.embedding, r.terms,
        (SELECT ${pairs("p.term", "p.n")} FROM ${t.recallTerms} p WHERE p.session_id = r.session_id AND p.position = r.position) AS counts
      FROM ${t.recall} r WHERE r.scope_id = ?`,
    params: [scope],
  });
  if ((await scopeVersion(dialect, t, scope)) !== version) return undefined;
  const items = new HeldRecallItems();
  for (const row of rows) {
    const item = { session: row.session_id, position: Number(row.position), at: Number(row.at), vector: floatsOf(row.embedding) };
    if (row.terms === null) {
      items.set(item);
      continue;
    }
    // The terms as a list again, each as often as it occurs, to the length the row notes (termCounts skips the padding).
    const terms: string[] = [];
    for (const [term, n] of JSON.parse(row.counts) as [string, number][]) for (let i = 0; i < n; i++) terms.push(term);
    while (terms.length < Number(row.terms)) terms.push("");
    items.set(item, terms);
  }
  return { items, bytes };
}
