import type { Command } from "commander";
import { UsageError } from "./cli-error.js";

/** Commander's collector for a repeatable option. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The filter every command over many sessions takes: `--user` and `--where` (repeatable). */
export function filterOptions(command: Command, verb = "only"): Command {
  return command
    .option("--user <userId>", `${verb} this user's sessions`)
    .option("--where <field=value>", `${verb} sessions whose key has this field value (repeatable)`, collect);
}

/** `--store`, and `--keys` for a store the app encrypts. */
export function storeOptions(command: Command): Command {
  return command
    .option("--store <url>", "the store (sqlite:./x.db, postgres://…, mysql://…, redis://…, mongodb://…, file:./dir; or MEMORIA_STORE)")
    .option("--keys <file>", "the master keys of an encrypted store, as JSON (see docs/cli.md)");
}

/** `--store`, `--keys` and the filter. */
export function storeAndFilter(command: Command, verb = "only"): Command {
  return filterOptions(storeOptions(command), verb);
}

/** A whole number >= 1 given to `name`. */
export function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${name} takes a whole number >= 1, got ${JSON.stringify(text)}.`);
  return n;
}
