import type { BaseMessage } from "@langchain/core/messages";
import type { ReadOptions } from "@memoria/core";
import type { TokenCounter } from "./token-counter.js";

/** Indexes where a turn starts (a human message): the only places a history may be cut. */
export function turnStarts(messages: readonly BaseMessage[]): number[] {
  const starts: number[] = [];
  messages.forEach((message, i) => {
    if (message.getType() === "human") starts.push(i);
  });
  return starts;
}

/**
 * The index where the last `turns` turns begin, a turn starting at a human
 * message; undefined when `messages` holds fewer human messages than that.
 */
export function startOfLastTurns(messages: readonly BaseMessage[], turns: number): number | undefined {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.getType() === "human" && ++seen === turns) return i;
  }
  return undefined;
}

/** How many messages `readLastTurns` reads first for `turns` turns (two a turn, at least 8). */
export const firstWindow = (turns: number): number => Math.max(2 * turns, 8);

/**
 * Reads the last `turns` whole turns from the store's end: first a window sized
 * for plain human/AI turns, then larger ones while turns hold more messages (tool
 * calls), never the whole session unless it is shorter than the window. A cut
 * always falls before a human message, so a tool result is never cut from its call.
 */
export async function readLastTurns(read: (options?: ReadOptions) => Promise<BaseMessage[]>, turns: number): Promise<BaseMessage[]> {
  if (turns === 0) return [];
  let size = firstWindow(turns);
  for (;;) {
    const messages = await read({ last: size });
    const start = startOfLastTurns(messages, turns);
    if (start !== undefined) return messages.slice(start);
    if (messages.length < size) return messages; // the whole session fits: nothing was cut
    size *= 4;
  }
}

/**
 * The earliest cut point (a turn start, or the end) after which `messages` fit in
 * `budget` tokens. Returns `messages.length` when not even the last turn fits.
 *
 * Cutting later never adds tokens, so the candidates are searched by halving:
 * log2(turns) counts of a tail instead of one count per turn.
 */
export async function cutToFit(messages: readonly BaseMessage[], budget: number, count: TokenCounter): Promise<number> {
  if ((await count(messages)) <= budget) return 0;
  const starts = turnStarts(messages).filter((start) => start > 0);
  let low = 0; // starts[i] for i < low do not fit
  let high = starts.length; // starts[i] for i >= high fit (or there are none)
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((await count(messages.slice(starts[middle]))) <= budget) high = middle;
    else low = middle + 1;
  }
  return low < starts.length ? (starts[low] as number) : messages.length;
}
