import { MemoriaError, type MemoryStrategy } from "@memoria/core";
import { firstWindow, readLastTurns } from "./turn-window.js";

export interface WindowMemoryOptions {
  /** How many of the latest turns (a human message and all that answered it) reach the prompt. */
  k: number;
  /**
   * The window's start moves in steps of about this many turns (twice as many
   * messages, counted from the session's first), so the prompt starts the same
   * for `step` turns at a time: what a provider's prompt cache rewards. The window
   * holds the last `k` turns at least, and up to about `step` more. 1 drops one
   * turn at a time, as LangChain's window does.
   * @default 1
   */
  step?: number;
}

/**
 * The last `k` turns of the conversation, read from the end of the store: a
 * turn's cost does not grow with the session's length.
 */
export function windowMemory({ k, step = 1 }: WindowMemoryOptions): MemoryStrategy {
  if (!Number.isSafeInteger(k) || k < 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `windowMemory: k must be a whole number >= 0, got ${k}.`);
  }
  if (!Number.isSafeInteger(step) || step < 1) {
    throw new MemoriaError("INVALID_ARGUMENT", `windowMemory: step must be a whole number >= 1, got ${step}.`);
  }
  if (step === 1 || k === 0) {
    return {
      name: `window(k=${k})`,
      load: ({ read }) => readLastTurns(read, k),
      firstRead: k === 0 ? undefined : { last: firstWindow(k) },
    };
  }
  const stepMessages = 2 * step;
  return {
    name: `window(k=${k}, step=${step})`,
    async load({ read, count }) {
      const [total, last] = await Promise.all([count(), readLastTurns(read, k)]);
      // Back to the grid line at or before the last k turns' start, then on to the first turn start from there.
      const from = Math.floor((total - last.length) / stepMessages) * stepMessages;
      if (from === total - last.length) return last;
      const wider = await read({ last: total - from });
      const start = wider.findIndex((message) => message.getType() === "human");
      return start < 0 ? last : wider.slice(start);
    },
  };
}
