import type { QueryTerm, RecallHit, RecallIndex, RecallItem, RecallSelector } from "@memoria/core";
import { checkRecallK, checkRecallSelector, dotProduct, unitVector } from "@memoria/core/store-kit";
import type { Tables } from "./schema.js";
import { searchTerms, writeTerms } from "./recall-terms.js";
import { type SqlDialect, run } from "./sql-dialect.js";

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
export function recallTable(dialect: SqlDialect, t: Tables, ready: () => Promise<void>): RecallIndex {
  // An erased session's messages are not indexed: the row would have nothing to belong to.
  const upsert = `INSERT INTO ${t.recall} (session_id, position, scope_id, at, embedding, terms)
    SELECT ?, ?, ?, ?, ?, ${dialect.param("bigint")} WHERE EXISTS (SELECT 1 FROM ${t.sessions} WHERE id = ?)
    ${dialect.upsert(["session_id", "position"], ["scope_id", "at", "embedding", "terms"])}`;
  let home: Promise<string> | undefined;
  return {
    name: dialect.engine === "sqlite" ? "sqlite-vec" : "sql-scan",
    home() {
      home ??= ready()
        .then(() => dialect.execute<unknown[]>({ kind: "column", sql: `SELECT home FROM ${t.version}`, params: [] }))
        .then(([id]) => `sql:${String(id)}`);
      home.catch(() => {
        home = undefined; // asked again next time
      });
      return home;
    },
    async upsert(items: readonly RecallItem[]) {
      if (items.length === 0) return;
      await ready();
      await dialect.transaction(function* () {
        for (const item of items) {
          yield* run(upsert, [item.session, item.position, item.scope, item.at, bytesOf(item.vector), item.terms ? item.terms.length : null, item.session]);
          yield* writeTerms(dialect, t, item);
        }
      });
    },
    async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      if (k === 0) return [];
      await ready();
      const query = bytesOf(vector);
      if (dialect.vectorDistance) {
        const rows = await dialect.execute<HitRow[]>({
          kind: "all",
          sql: `SELECT session_id, position, at, ${dialect.vectorDistance("embedding")} AS distance FROM ${t.recall} WHERE scope_id = ? ORDER BY distance LIMIT ?`,
          params: [query, scope, k],
        });
        return rows.map((row) => ({ session: row.session_id, position: Number(row.position), at: Number(row.at), score: 1 - Number(row.distance) }));
      }
      const rows = await dialect.execute<HitRow[]>({ kind: "all", sql: `SELECT session_id, position, at, embedding FROM ${t.recall} WHERE scope_id = ?`, params: [scope] });
      const q = unitVector(vector);
      return rows
        .map((row) => ({ session: row.session_id, position: Number(row.position), at: Number(row.at), score: dotProduct(floatsOf(row.embedding as Uint8Array), q) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, k);
    },
    async searchTerms(scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      await ready();
      return searchTerms(dialect, t, scope, query, k);
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
      const removed = await dialect.execute<number>({ kind: "run", sql: `DELETE FROM ${t.recall} WHERE ${where.join(" AND ")}`, params });
      await dialect.afterErase();
      return removed;
    },
  };
}
