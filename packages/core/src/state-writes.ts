import { MemoriaError } from "./errors.js";
import { type FencedWriteOptions, type HistoryStore, stateName, stateValue } from "./history-store.js";
import type { JsonValue } from "./json-value.js";
import type { SessionKey } from "./session-key.js";

/**
 * The entries of a `setStates` call, each name and value checked (values as
 * private JSON copies) before a store writes any of them.
 */
export function stateEntries(values: Readonly<Record<string, JsonValue>>): [string, JsonValue][] {
  if (typeof values !== "object" || values === null || Array.isArray(values)) {
    throw new MemoriaError(
      "INVALID_ARGUMENT",
      `setStates() takes an object of state values by name, got ${Array.isArray(values) ? "an array" : String(values)}.`,
    );
  }
  return Object.keys(values).map((name) => [stateName(name), stateValue(values[name])]);
}

/**
 * Stores state values of a session: one value with `setState` (every store has it);
 * several in one step with the store's `setStates`, or (a store without it) one
 * `setState` after another, in order, so a failure part-way leaves the earlier ones written.
 */
export async function writeStates(
  store: HistoryStore,
  key: SessionKey,
  values: Readonly<Record<string, JsonValue>>,
  options?: FencedWriteOptions,
): Promise<void> {
  const names = values && typeof values === "object" && !Array.isArray(values) ? Object.keys(values) : [];
  if (names.length === 1) return store.setState(key, names[0] as string, values[names[0] as string] as JsonValue, options);
  if (store.setStates) return store.setStates(key, values, options);
  for (const [name, value] of stateEntries(values)) await store.setState(key, name, value, options);
}
