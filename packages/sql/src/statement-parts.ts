import type { SessionKey } from "@memoria/core";
import type { Tables } from "./schema.js";

/**
 * What PostgreSQL's one-statement writes (`one-statement-append.ts`,
 * `one-statement-states.ts`) share: their shape, a cache of their texts, and the
 * first and the key-field steps of their data-modifying CTEs.
 */

/** A write as one statement: its text and values, and what its one row says it did. */
export interface OneStatement<Outcome> {
  sql: string;
  params: unknown[];
  outcome(row: Record<string, unknown> | undefined): Outcome;
}

const texts = new Map<string, string>();

/** A statement's text by its shape (tables, TTL, how many key fields, fenced or not…), built once. */
export function cachedText(shape: string, build: () => string): string {
  let text = texts.get(shape);
  if (text === undefined) {
    text = build();
    texts.set(shape, text);
  }
  return text;
}

/** Whether the session is still open: the expired check every step reads. */
export const OPEN = "(SELECT n FROM gone) = 0";

/**
 * The first steps: the clock read once (`MATERIALIZED`, so every step agrees on
 * whether the session expired), the expired check, a fence step on the lock row if
 * given, and `ok`, one row when the write may go on.
 */
export function gate(t: Tables, nowMs: string, fence: string | undefined): string {
  return `WITH c AS MATERIALIZED (SELECT ${nowMs} AS now),
  gone AS MATERIALIZED (
    SELECT count(*) AS n FROM ${t.sessions}, c WHERE id = $1::text AND expires_at IS NOT NULL AND expires_at <= c.now
  ),
  ${fence ? `fence AS (${fence}),` : ""}
  ok AS MATERIALIZED (SELECT 1 AS one WHERE ${OPEN}${fence ? " AND EXISTS (SELECT 1 FROM fence)" : ""})`;
}

/** The step that gives a new session its key fields (`when`, on `sess`, says it is new), from parameters `$first` on, in pairs. */
export function keyFieldsStep(t: Tables, fieldCount: number, first: number, when: string): string {
  const rows = Array.from({ length: fieldCount }, (_, i) => `($${first + 2 * i}::text, $${first + 2 * i + 1}::text)`).join(", ");
  return `keyed AS (
    INSERT INTO ${t.fields} (session_id, field, value)
    SELECT $1::text, f.field, f.value FROM sess, (VALUES ${rows}) AS f (field, value) WHERE ${when}
    ON CONFLICT DO NOTHING
  )`;
}

/** A write's own values, then the lock's token when it is fenced, then the key's fields as field / value pairs (`keyFieldsStep`). */
export function withKeyParams(own: unknown[], token: string | undefined, key: SessionKey): unknown[] {
  const params = [...own];
  if (token !== undefined) params.push(token);
  for (const field of Object.keys(key)) params.push(field, key[field]);
  return params;
}
