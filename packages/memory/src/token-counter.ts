import type { BaseMessage } from "@langchain/core/messages";
import { getEncoding, type Tiktoken } from "js-tiktoken";

/** Counts the tokens a list of messages takes in a prompt. */
export type TokenCounter = (messages: readonly BaseMessage[]) => number | Promise<number>;

let cl100k: Tiktoken | undefined;

function text(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

/**
 * Token counts with js-tiktoken's `cl100k_base` (bundled, so it works offline):
 * each message's text, name and tool calls, plus 4 tokens of role and framing, as
 * OpenAI's chat format counts them. For another model's exact count, pass its own
 * counter, e.g. `(m) => model.getNumTokensFromMessages(m).then((r) => r.totalCount)`.
 */
export function tiktokenCounter(): TokenCounter {
  return (messages) => {
    cl100k ??= getEncoding("cl100k_base");
    let total = 0;
    for (const message of messages) {
      total += 4 + cl100k.encode(text(message)).length;
      if (message.name) total += cl100k.encode(message.name).length;
      const calls = (message as { tool_calls?: unknown[] }).tool_calls;
      if (calls?.length) total += cl100k.encode(JSON.stringify(calls)).length;
    }
    return total;
  };
}

/** Tokens of a plain text, with the same encoding. */
export function countTextTokens(value: string): number {
  cl100k ??= getEncoding("cl100k_base");
  return cl100k.encode(value).length;
}

/** The first `max` tokens of `value`. */
export function truncateToTokens(value: string, max: number): string {
  cl100k ??= getEncoding("cl100k_base");
  const tokens = cl100k.encode(value);
  return tokens.length <= max ? value : cl100k.decode(tokens.slice(0, max));
}
