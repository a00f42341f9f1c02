import type { QueryTerm, RecallHit, RecallItem } from "@memoria/core";
import { BM25_B, BM25_K1, queryGroups, termCounts } from "@memoria/recall";
import type { Tables } from "./schema.js";
import { type SqlDialect, type SqlProgram, run } from "./sql-dialect.js";

const TERM_ROW = [
  ["term", "text"],
  ["n", "bigint"],
] as const;
const ASKED_ROW = [
  ["word", "bigint"],
  ["term", "text"],
  ["weight", "double"],
] as const;

/**
 * A term as the engine keys it: where it limits their length (MySQL), a longer term
 * is cut to it, whole characters only, on writes and queries alike.
 */
function clip(dialect: SqlDialect, term: string): string {
  const max = dialect.features.maxTermLength;
  if (max === undefined || term.length <= max) return term;
  return term.slice(0, /[\ud800-\udbff]/.test(term[max - 1] as string) ? max - 1 : max);
}

/** Terms written per statement: the statement text varies with the count, so a cap keeps the prepared ones few. */
const TERMS_PER_STATEMENT = 32;

interface ScoreRow {
  session_id: string;
  position: number | string;
  at: number | string;
  score: number | string;
}

/**
 * Writes an item's terms beside its vector row, inside the upsert's transaction: the
 * old ones go first, and the new are copied from the row only if the row is there
 * (an erased session's item was not indexed), so their foreign key holds.
 */
export function* writeTerms(dialect: SqlDialect, t: Tables, item: RecallItem): SqlProgram<void> {
  yield* run(`DELETE FROM ${t.recallTerms} WHERE session_id = ? AND position = ?`, [item.session, item.position]);
  const rows = [...termCounts((item.terms ?? []).map((term) => clip(dialect, term)))];
  for (let from = 0; from < rows.length; from += TERMS_PER_STATEMENT) {
    const chunk = rows.slice(from, from + TERMS_PER_STATEMENT);
    yield* run(
      `INSERT INTO ${t.recallTerms} (session_id, position, scope_id, term, n, length)
        SELECT r.session_id, r.position, r.scope_id, v.term, v.n, r.terms
        FROM ${t.recall} r, (${dialect.forms.paramRows(TERM_ROW, chunk.length)}) AS v
        WHERE r.session_id = ? AND r.position = ?`,
      [...chunk.flat(), item.session, item.position],
    );
  }
}

/**
 * The scope's `k` items best matching `query` by BM25, ranked in the engine in one
 * statement: each asked term's weight from how many of the scope's items hold it
 * (the primary key's (scope, term) prefix) times its form's weight, each item's
 * share per query word the best of that word's forms, summed over the words; the
 * vector rows are read for the top `k` only. The same formula as `TermIndex`
 * (core's lexical-ranking.ts).
 */
export async function searchTerms(dialect: SqlDialect, t: Tables, scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]> {
  const asked = queryGroups(query)
    .flatMap((forms, word) => forms.map(({ term, weight }) => [word, clip(dialect, term), weight] as const))
    .slice(0, Math.floor((dialect.features.maxParams - 8) / 3));
  if (asked.length === 0 || k === 0) return [];
  const rows = await dialect.driver.execute<ScoreRow[]>({
    kind: "all",
    sql: `WITH stats AS (SELECT COUNT(*) AS items, AVG(terms) AS average FROM ${t.recall} WHERE scope_id = ? AND terms IS NOT NULL),
      asked AS (${dialect.forms.paramRows(ASKED_ROW, asked.length)}),
      weights AS (
        SELECT asked.word, h.term, asked.weight * ln(1 + (stats.items - h.holding + 0.5) / (h.holding + 0.5)) AS weight, stats.average AS average
        FROM (SELECT term, COUNT(*) AS holding FROM ${t.recallTerms} WHERE scope_id = ? AND term IN (SELECT term FROM asked) GROUP BY term) h
        JOIN asked ON asked.term = h.term CROSS JOIN stats
      ),
      shares AS (
        SELECT p.session_id, p.position,
          MAX(w.weight * p.n * ${BM25_K1 + 1} / (p.n + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * p.length / w.average))) AS share
        FROM weights w CROSS JOIN ${t.recallTerms} p WHERE p.scope_id = ? AND p.term = w.term
        GROUP BY p.session_id, p.position, w.word
      ),
      best AS (
        SELECT session_id, position, SUM(share) AS score FROM shares
        GROUP BY session_id, position
        ORDER BY score DESC, session_id DESC, position DESC
        LIMIT ?
      )
      SELECT best.session_id, best.position, r.at, best.score
      FROM best JOIN ${t.recall} r ON r.session_id = best.session_id AND r.position = best.position
      ORDER BY best.score DESC, r.at DESC, best.session_id DESC, best.position DESC`,
    params: [scope, ...asked.flat(), scope, scope, k],
  });
  return rows.map((row) => ({ session: row.session_id, position: Number(row.position), at: Number(row.at), score: Number(row.score) }));
}
