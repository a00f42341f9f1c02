import { quoteLine, quoteMessages } from "../quoting.js";
import type { RecalledPassage } from "./recall-memory.js";

/**
 * A recalled passage as the memory block shows it: where it was said (the session's
 * fields other than the scope's) and on which day, then its messages, quoted. Written
 * with loops rather than builtins: it runs on every turn, cold (see `sortedFew` in the store kit).
 */
export function excerptOf(passage: RecalledPassage, scopeFields: readonly string[] | undefined): string {
  let where = "";
  for (const field in passage.session) if (!scopeFields?.includes(field)) where += `${where && ", "}${field} ${passage.session[field]}`;
  return `${quoteLine(`From the conversation ${where || passage.conversation} on ${isoDay(passage.at)}:`)}\n${quoteMessages(passage.messages)}`;
}

/** The UTC day of a time (epoch ms, or a date string) as `YYYY-MM-DD`, as `toISOString` writes it. */
export function isoDay(when: number | string): string {
  const date = new Date(when);
  const year = date.getUTCFullYear();
  // Outside four-digit years (and for an invalid date, which throws) as toISOString has it.
  if (!(year >= 1000 && year <= 9999)) return date.toISOString().slice(0, 10);
  const month = date.getUTCMonth() + 1;
  const day = date.getUTCDate();
  return `${year}-${month < 10 ? "0" : ""}${month}-${day < 10 ? "0" : ""}${day}`;
}
