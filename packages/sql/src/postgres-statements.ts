import { MemoriaError } from "@memoria/core";
import type { SqlStep } from "./sql-dialect.js";

/*
 * The forms a store statement takes on its way to pg: with numbered placeholders
 * (and a name, so each connection prepares it once) for the extended protocol, or
 * with its values written in as literals for the simple one.
 */
/** `?` placeholders to pg's `$1, $2, …` (the store's SQL holds no `?` inside strings). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A statement's text for pg, and the name it is prepared under, if it has one. */
export interface PgStatement {
  text: string;
  name: string | undefined;
}

/**
 * The most statement texts given a name, process-wide: a connection keeps each one
 * it has run prepared until it closes, so the count is bounded, not the texts, some
 * of which vary with their input (an `IN` list's length); the ones past it run unnamed.
 */
const NAMED_STATEMENTS = 200;
const translated = new Map<string, PgStatement>();
export function pgStatement(step: SqlStep): PgStatement {
  const { sql } = step;
  let statement = translated.get(sql);
  if (statement === undefined) {
    // A statement without parameters (a migration's DDL, BEGIN) runs once or costs nothing to parse.
    const named = translated.size < NAMED_STATEMENTS && step.params.length > 0;
    statement = { text: numbered(sql), name: named ? `memoria_${translated.size}` : undefined };
    translated.set(sql, statement);
  }
  return statement;
}

/**
 * A statement with its `?` placeholders replaced by literals: a string dollar-quoted
 * with a tag it does not contain (inside, nothing is an escape, whatever the server's
 * string settings; only the tag ends it), a number only as a safe integer. Measured
 * here, a hex literal decoded by the server cost a lock's query 0.1 ms more.
 */
export function inlined(step: SqlStep): string {
  let next = 0;
  return step.sql.replace(/\?/g, () => literal(step.params[next++]));
}

function literal(value: unknown): string {
  if (typeof value === "string" && !value.includes("\0")) return dollarQuoted(value);
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  throw new MemoriaError("INVALID_ARGUMENT", `A value of type ${typeof value} cannot be written into a statement's text.`);
}

/**
 * The statements a step takes in a query of the simple protocol, where a statement
 * that has a name runs as `EXECUTE` of a statement prepared on the connection with
 * SQL's `PREPARE` (prepended the first time; `prepared` holds what the connection has),
 * so the server does not parse and plan it on every call; its values are literals.
 * The SQL name is not the protocol one: pg would parse that name again on the connection.
 */
export function executing(step: SqlStep, prepared: Set<string>): string[] {
  const { text, name } = pgStatement(step);
  if (name === undefined) return [inlined(step)];
  const sqlName = `${name}_sql`;
  const execute = `EXECUTE ${sqlName}(${step.params.map(literal).join(", ")})`;
  if (prepared.has(sqlName)) return [execute];
  prepared.add(sqlName);
  return [`PREPARE ${sqlName} AS ${text}`, execute];
}

/** `$v$…$v$`, or `$v1$…$v1$` and on, the first tag that first appears in `value + tag` at its end. */
function dollarQuoted(value: string): string {
  let tag = "$v$";
  for (let n = 1; (value + tag).indexOf(tag) !== value.length; n++) tag = `$v${n}$`;
  return `${tag}${value}${tag}`;
}
