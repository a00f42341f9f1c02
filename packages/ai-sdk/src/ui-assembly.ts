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

/**
 * The UI message of a plain question or answer stored without a record (its
 * content one non-empty string; an answer without tool calls), built without
 * walking parts: most of a chat. What `nativeParts` would build.
 */
function plainMessage(segment: BaseMessage, id: string): UIMessage | undefined {
  const { content } = segment;
  if (typeof content !== "string" || content.length === 0) return undefined;
  const type = segment.getType();
  if (type === "ai") {
    if ((segment as { tool_calls?: unknown[] }).tool_calls?.length) return undefined;
    return { id, role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: content, state: "done" }] };
  }
  if (type === "human" || type === "system") return { id, role: type === "human" ? "user" : "system", parts: [{ type: "text", text: content }] };
  return undefined;
}

/** An AI step whose tool calls want results, or a result: the answer goes on with the next AI step. */
function awaitsMore(message: BaseMessage): boolean {
  const type = message.getType();
  return type === "tool" || (type === "ai" && ((message as { tool_calls?: unknown[] }).tool_calls?.length ?? 0) > 0);
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
  // An answer's text is streamed and done; a question's is typed, with no state (as useChat sends it).
  for (const text of texts(message)) if (text.length > 0) parts.push(type === "ai" ? { type: "text", text, state: "done" } : { type: "text", text });
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
 * LangChain's own messages from `start`: an AI step, its tool results and the steps
 * that go on from them are one answer, up to a human, system or saved message, or
 * an AI step that follows a finished one (a new answer). `end`: the first message after it.
 */
function nativeMessage(stored: readonly BaseMessage[], records: readonly (SegmentRecord | undefined)[], start: number): { parts: Part[]; end: number } {
  const head = stored[start] as BaseMessage;
  const calls = new Map<string, Part>();
  const parts = nativeParts(head, calls);
  let end = start + 1;
  if (head.getType() !== "ai" && head.getType() !== "tool") return { parts, end };
  for (; end < stored.length && !records[end]; end++) {
    const type = (stored[end] as BaseMessage).getType();
    if (type !== "tool" && !(type === "ai" && awaitsMore(stored[end - 1] as BaseMessage))) break;
    parts.push(...nativeParts(stored[end] as BaseMessage, calls));
  }
  return { parts, end };
}

/**
 * Groups stored messages into UI messages, in order. `first` is the position of
 * `stored[0]` in the session, naming messages LangChain wrote without an id. A UI
 * message whose first segment is not in `stored` (a window that starts inside it)
 * is left out.
 */
export function assembleUIMessages(
  stored: readonly BaseMessage[],
  first = 0,
): { messages: UIMessage[]; partial: Set<string>; spans: { start: number; end: number }[] } {
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
      const id = head.id ?? `lc-${first + start}`;
      message = plainMessage(head, id);
      if (message) index++;
      else {
        const native = nativeMessage(stored, records, start);
        message = { id, role: roleOf(head), parts: native.parts as UIMessage["parts"] };
        index = native.end;
      }
    }
    if (!message) continue;
    if (isPartial(stored, start, index)) partial.add(message.id);
    messages.push(message);
    spans.push({ start, end: index });
  }
  return { messages, partial, spans };
}
