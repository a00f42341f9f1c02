import { type BaseMessage, getBufferString } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";

/** A model that writes summaries: any chat model or LLM, or a runnable from prompt text to text or a message. */
export type SummaryModel = Pick<Runnable<string, unknown>, "invoke">;

export const DEFAULT_SUMMARY_PROMPT = `Progressively summarize the lines of conversation provided, adding onto the previous summary and returning a new summary. Keep names, facts and decisions; drop small talk.

Current summary:
{summary}

New lines of conversation:
{new_lines}

New summary:`;

/** A model's answer as text: a string, a message's text content, or its blocks' text. */
export function textOf(output: unknown): string {
  if (typeof output === "string") return output;
  const content = (output as { content?: unknown })?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === "string" ? part : ((part as { text?: string }).text ?? ""))).join("");
  return String(output);
}

/** The summary so far, extended with `messages`: only these new lines go to the model. */
export async function extendSummary(
  model: SummaryModel,
  summary: string,
  messages: readonly BaseMessage[],
  options: { prompt?: string; humanPrefix?: string; aiPrefix?: string } = {},
): Promise<string> {
  if (messages.length === 0) return summary;
  const prompt = (options.prompt ?? DEFAULT_SUMMARY_PROMPT)
    .replace("{summary}", summary)
    .replace("{new_lines}", getBufferString([...messages], options.humanPrefix ?? "Human", options.aiPrefix ?? "AI"));
  return textOf(await model.invoke(prompt)).trim();
}
