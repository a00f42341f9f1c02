import { MemoriaError, type MemoryStrategy } from "@memoria/core";
import { firstWindow, readLastTurns } from "./turn-window.js";

export interface WindowMemoryOptions {
  /** How many of the latest turns (a human message and all that answered it) reach the prompt. */
  k: number;
}

/**
 * The last `k` turns of the conversation, read from the end of the store: a
 * turn's cost does not grow with the session's length.
 */
export function windowMemory({ k }: WindowMemoryOptions): MemoryStrategy {
  if (!Number.isSafeInteger(k) || k < 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `windowMemory: k must be a whole number >= 0, got ${k}.`);
  }
  return {
    name: `window(k=${k})`,
    load: ({ read }) => readLastTurns(read, k),
    firstRead: k === 0 ? undefined : { last: firstWindow(k) },
  };
}
