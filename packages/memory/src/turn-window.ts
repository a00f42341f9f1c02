import type { BaseMessage } from "@langchain/core/messages";
import type { ReadOptions } from "@memoria/core";

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

/**
 * Reads the last `turns` whole turns from the store's end: first a window sized
 * for plain human/AI turns, then larger ones while turns hold more messages (tool
 * calls), never the whole session unless it is shorter than the window. A cut
 * always falls before a human message, so a tool result is never cut from its call.
 */
export async function readLastTurns(read: (options?: ReadOptions) => Promise<BaseMessage[]>, turns: number): Promise<BaseMessage[]> {
  if (turns === 0) return [];
  let size = Math.max(2 * turns, 8);
  for (;;) {
    const messages = await read({ last: size });
    const start = startOfLastTurns(messages, turns);
    if (start !== undefined) return messages.slice(start);
    if (messages.length < size) return messages; // the whole session fits: nothing was cut
    size *= 4;
  }
}
