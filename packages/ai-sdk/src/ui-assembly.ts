import type { BaseMessage } from "@langchain/core/messages";
import type { UIMessage } from "ai";
import { type SegmentRecord, UI_FIELD, defaultParts } from "./ui-segments.js";

/*
 * Stored messages back to UI messages: the segments of a saved UI message are put
 * back together exactly; messages written by LangChain (RunnableWithMessageHistory,
 * an agent) become UI messages too, an AI step with its tool calls and results
 * becoming one assistant message, as the AI SDK shows a multi-step answer.
 */

type Part = Record<string, unknown> & { type: string };

/** A stored message's segment record, when it was saved from a UI message. */
export function segmentRecord(message: BaseMessage): SegmentRecord | undefined {
  const value = (message.additional_kwargs as Record<string, unknown> | undefined)?.[UI_FIELD];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const stored = value as Partial<SegmentRecord>;
  const seg = stored.seg ?? 0;
  const id = stored.id ?? (seg === 0 ? message.id : undefined);
  if (typeof id !== "string" || typeof seg !== "number") return undefined;
  const parts = stored.parts ?? (seg === 0 ? defaultParts(roleOf(message)) : undefined);
  if (!Array.isArray(parts)) return undefined;
  return { ...stored, id, seg, parts };
}

function texts(message: BaseMessage): string[] {
  const { content } = message;
  if (typeof content === "string") return [content];
  return content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []));
}

function isPartial(stored: readonly BaseMessage[], start: number, end: number): boolean {
  for (let index = start; index < end; index++) {
    if ((stored[index]?.response_metadata as Record<string, unknown> | undefined)?.memoria_partial !== undefined) return true;
  }
  return false;
}

/** One UI message's parts from its segments (`stored[start..end)`), text and tool outputs put back in their parts. */
function partsOf(stored: readonly BaseMessage[], records: readonly (SegmentRecord | undefined)[], start: number, end: number): Part[] {
  const parts: Part[] = [];
  for (let index = start; index < end; index++) {
    const segment = stored[index] as BaseMessage;
    const saved = records[index] as SegmentRecord;
    if (segment.getType() === "tool") {
      const part = { ...(saved.parts[0] as Part) };
      const content = typeof segment.content === "string" ? segment.content : texts(segment).join("");
      // A redactor may have left JSON that no longer parses: the output then comes back as its text (validation can flag it), never failing the chat.
      if (part.state === "output-available") part.output = saved.text ? content : parseOrText(content);
      else if (part.state === "output-error") part.errorText = content;
      parts.push(part);
      continue;
    }
    const text = texts(segment);
    let next = 0;
    for (const stored of saved.parts as Part[]) {
      if (stored.type === "text") parts.push({ text: text[next++] ?? "", ...stored, type: "text" });
      else parts.push(stored);
    }
  }
  return parts;
}

function roleOf(message: BaseMessage): UIMessage["role"] {
  const type = message.getType();
  return type === "human" ? "user" : type === "system" ? "system" : "assistant";
}

/** A message LangChain wrote, as UI parts: its text, its tool calls (dynamic tools), results filled in from the tool messages. */
function nativeParts(message: BaseMessage, calls: Map<string, Part>): Part[] {
  const type = message.getType();
  if (type === "tool") {
    const id = String((message as { tool_call_id?: string }).tool_call_id);
    const call = calls.get(id);
    if (call) {
      const content = typeof message.content === "string" ? message.content : texts(message).join("");
      if ((message as { status?: string }).status === "error") Object.assign(call, { state: "output-error", errorText: content });
      else Object.assign(call, { state: "output-available", output: parseOrText(content) });
    }
    return [];
  }
  const parts: Part[] = type === "ai" ? [{ type: "step-start" }] : [];
  for (const text of texts(message)) if (text.length > 0) parts.push({ type: "text", text, state: "done" });
  for (const call of (message as { tool_calls?: { id?: string; name: string; args: unknown }[] }).tool_calls ?? []) {
    const part: Part = { type: "dynamic-tool", toolName: call.name, toolCallId: call.id ?? "", state: "input-available", input: call.args };
    if (call.id) calls.set(call.id, part);
    parts.push(part);
  }
  return parts;
}

function parseOrText(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/**
 * Groups stored messages into UI messages, in order. `first` is the position of
 * `stored[0]` in the session, naming messages LangChain wrote without an id. A UI
 * message whose first segment is not in `stored` (a window that starts inside it)
 * is left out.
 */
export function assembleUIMessages(stored: readonly BaseMessage[], first = 0): { messages: UIMessage[]; partial: Set<string>; spans: { start: number; end: number }[] } {
  const messages: UIMessage[] = [];
  const spans: { start: number; end: number }[] = [];
  const partial = new Set<string>();
  const records = stored.map(segmentRecord);
  let index = 0;
  while (index < stored.length) {
    const start = index;
    const head = stored[index] as BaseMessage;
    const saved = records[index];
    let message: UIMessage | undefined;
    if (saved) {
      index++;
      while (index < stored.length && records[index]?.id === saved.id && (records[index] as SegmentRecord).seg > 0) index++;
      if (saved.seg === 0) {
        message = { id: saved.id, role: roleOf(head), parts: partsOf(stored, records, start, index) as UIMessage["parts"] };
        if (saved.metadata !== undefined) message.metadata = saved.metadata;
      }
    } else {
      // LangChain's own messages: an AI step and its tool results, up to the next human, system or saved message, are one answer.
      const calls = new Map<string, Part>();
      const parts = nativeParts(head, calls);
      index++;
      if (head.getType() === "ai" || head.getType() === "tool") {
        while (index < stored.length && ["ai", "tool"].includes((stored[index] as BaseMessage).getType()) && !records[index]) {
          parts.push(...nativeParts(stored[index] as BaseMessage, calls));
          index++;
        }
      }
      message = { id: head.id ?? `lc-${first + start}`, role: roleOf(head), parts: parts as UIMessage["parts"] };
    }
    if (!message) continue;
    if (isPartial(stored, start, index)) partial.add(message.id);
    messages.push(message);
    spans.push({ start, end: index });
  }
  return { messages, partial, spans };
}
