import { AIMessage, type BaseMessage, getBufferString } from "@langchain/core/messages";
import { answerMemoryPrompt } from "@memoria/testkit";
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

/** The scripted memory model, recording every prompt; `gate` holds extraction calls until opened. */
export function memoryModel() {
  const prompts: string[] = [];
  let fail = 0;
  let gate: Promise<void> | undefined;
  const model = RunnableLambda.from(async (prompt: string) => {
    prompts.push(prompt);
    if (gate && prompt.startsWith("You keep long-term memory")) await gate;
    if (fail > 0 && prompt.startsWith("You keep long-term memory")) {
      fail--;
      throw new Error("model unavailable");
    }
    const answer = answerMemoryPrompt(prompt);
    if (answer === undefined) throw new Error(`unexpected prompt: ${prompt.slice(0, 80)}`);
    return answer;
  });
  return {
    model,
    prompts,
    extractions: () => prompts.filter((prompt) => prompt.startsWith("You keep long-term memory")),
    failNext: (n: number) => {
      fail = n;
    },
    hold: () => {
      let open!: () => void;
      gate = new Promise((resolve) => {
        open = resolve;
      });
      return () => {
        gate = undefined;
        open();
      };
    },
  };
}

/** A chat model that records the messages it was given. */
export function recordingChat() {
  const prompts: BaseMessage[][] = [];
  const model = RunnableLambda.from((messages: BaseMessage[]) => {
    prompts.push(messages);
    return new AIMessage("noted");
  });
  return { model, prompts, lastSystem: () => prompts.at(-1)?.find((m) => m.getType() === "system")?.content as string | undefined };
}
