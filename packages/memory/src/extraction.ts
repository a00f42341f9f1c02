import { type BaseMessage, getBufferString } from "@langchain/core/messages";
import type { MemoryLoadContext } from "@memoria/core";
import { type MemoryKind, memoryBlock, memoryMessage } from "./memory-block.js";
import type { SummaryModel } from "./summarizer.js";

/** The model's answer as text. */
export async function ask(model: SummaryModel, prompt: string): Promise<string> {
  const output = await model.invoke(prompt);
  if (typeof output === "string") return output.trim();
  const content = (output as { content?: unknown })?.content;
  return (typeof content === "string" ? content : JSON.stringify(content ?? "")).trim();
}

export function linesOf(messages: readonly BaseMessage[]): string {
  return getBufferString([...messages]);
}

export function textOfMessages(messages: readonly BaseMessage[]): string {
  return messages.map((m) => (typeof m.content === "string" ? m.content : m.text)).join("\n");
}

/** True when `name` appears in `text` as a whole word or phrase, ignoring case. */
export function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, "iu").test(text);
}

/**
 * Messages stored since the state was last brought up to date (`processed` of
 * them), at most `limit`; what a crash left unprocessed is caught up here.
 */
export async function unprocessed(context: MemoryLoadContext, processed: number, limit: number): Promise<{ messages: BaseMessage[]; total: number }> {
  const total = await context.count();
  if (total <= processed) return { messages: [], total };
  return { messages: await context.read({ last: Math.min(total - processed, limit) }), total };
}

/** Stored items (each already quoted) as a list in a memory block, or nothing when there are none. */
export function contextMessage(kind: MemoryKind, label: string, items: readonly string[]): BaseMessage[] {
  return items.length ? [memoryMessage(memoryBlock(kind, label, items.map((item) => `- ${item}`).join("\n")))] : [];
}
