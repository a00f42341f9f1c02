import { MemoriaError, type RecallSelector } from "@memoria/core";

/** Checks a search's `k`: a whole number, 0 or more. */
export function checkRecallK(k: number): void {
  if (!Number.isSafeInteger(k) || k < 0) throw new MemoriaError("INVALID_ARGUMENT", `RecallIndex.search: k must be a whole number >= 0, got ${k}.`);
}

/** Checks `remove`'s selector: at least one condition, so nothing is dropped by accident. */
export function checkRecallSelector(selector: RecallSelector): void {
  if (selector.scope === undefined && selector.sessions === undefined && selector.before === undefined) {
    throw new MemoriaError("INVALID_ARGUMENT", "RecallIndex.remove needs a scope, sessions or a time (before).");
  }
}
