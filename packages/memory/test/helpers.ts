import { type BaseMessage, getBufferString } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";

/** The two stores every strategy is tested on. */
export const STORES: [string, () => HistoryStore][] = [
  ["in-memory", () => createInMemoryStore()],
  ["sqlite", () => createSqliteStore({ path: ":memory:" })],
];

/**
 * A deterministic summarizer: it records each prompt's new lines and answers with
 * the previous summary plus the first word of each new line, so tests can see
 * exactly what was folded, and when.
 */
export function recordingSummarizer() {
  const calls: string[][] = [];
  const model = RunnableLambda.from((prompt: string) => {
    const previous = /Current summary:\n([\s\S]*?)\n\nNew lines of conversation:/.exec(prompt)?.[1] ?? "";
    const lines = (/New lines of conversation:\n([\s\S]*?)\n\nNew summary:/.exec(prompt)?.[1] ?? "").split("\n");
    calls.push(lines);
    const words = lines.map((line) => line.split(": ")[1]?.split(" ")[0] ?? "");
    return [previous, ...words].filter(Boolean).join(" ");
  });
  return { model, calls };
}

export function lines(messages: BaseMessage[]): string {
  return getBufferString(messages);
}

import { LLM } from "@langchain/core/language_models/llms";

/** A text-completion model that answers with the given responses, in order. */
export class ScriptedLLM extends LLM {
  private turn = 0;
  constructor(private readonly responses: string[]) {
    super({});
  }
  _llmType() {
    return "scripted";
  }
  async _call(): Promise<string> {
    return this.responses[this.turn++ % this.responses.length] as string;
  }
}
