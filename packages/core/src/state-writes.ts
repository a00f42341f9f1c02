import { MemoriaError } from "./errors.js";
import { stateName, stateValue } from "./history-store.js";
import type { JsonValue } from "./json-value.js";

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
