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
    throw new MemoriaError("INVALID_ARGUMENT", `setStates() takes an object of state values by name, got ${Array.isArray(values) ? "an array" : String(values)}.`);
  }
  return Object.keys(values).map((name) => [stateName(name), stateValue(values[name])]);
}

/**
 * Stores several state values of a session: in one step with the store's
 * `setStates`, or (a store without it) one `setState` after another, in order, so
 * a failure part-way leaves the earlier ones written.
 */
export async function writeStates(store: HistoryStore, key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void> {
  if (store.setStates) return store.setStates(key, values, options);
  for (const [name, value] of stateEntries(values)) await store.setState(key, name, value, options);
}
