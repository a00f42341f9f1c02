import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { InvalidMessageError, type JsonValue } from "@memoria/core";
import { toJsonValue } from "@memoria/core/store-kit";
import type { UIMessage } from "ai";

/*
 * One UI message is stored as one or more LangChain messages ("segments") of the
 * session, so that RunnableWithMessageHistory, `memoria show`, the studio and every
 * store wrapper see an AI SDK chat as the ordinary conversation it is:
 *
 * - a user message is a HumanMessage, a system message a SystemMessage;
 * - an assistant message is an AIMessage per step, each finished tool call of the
 *   step a `tool_calls` entry followed by its ToolMessage (output, or error text
 *   with `status: "error"`), as a LangChain agent stores a turn.
 *
 * The text of text parts is the messages' content; a tool's output is its
 * ToolMessage's content. Everything else a part holds (its state, provider
 * metadata, reasoning, sources, files, data parts, step boundaries, calls still
 * waiting for input or approval) is kept, in order, under
 * `additional_kwargs.ui_message` of the segment it falls in, with the message's
 * id and metadata, so the UI message comes back exactly as it was saved.
 *
 * A plain question, or a plain answer right after one (one non-empty text, the
 * role's usual parts, no metadata) carries no record at all: it is stored exactly
 * as LangChain would store it with its id, and loads back the same (see
 * ui-assembly.ts). That is most of a chat, and it keeps a read as cheap as the
 * bare store's.
 */

/** Where a segment keeps what its LangChain fields do not hold. */
export const UI_FIELD = "ui_message";

/**
 * What `additional_kwargs.ui_message` holds, once read. As stored, the common
 * case costs almost nothing: `id` and `seg` are left out of a message's first
 * segment (its id is the LangChain message's own), and `parts` when they are the
 * usual ones for the role (see {@link defaultParts}): `ui_message: {}`, or no
 * record at all for a plain question or answer.
 */
export interface SegmentRecord {
  /** The UI message's id. */
  id: string;
  /** The segment's place in its UI message: 0 for the first. */
  seg: number;
  /** The parts in this segment, text and tool outputs taken out (they are the LangChain fields). */
  parts: JsonValue[];
  /** The UI message's metadata (first segment only). */
  metadata?: JsonValue;
  /** For a tool segment whose output was a string (content as is) rather than JSON (content parsed). */
  text?: true;
}

type Part = Record<string, unknown> & { type: string };

/** A tool part whose call has an outcome: it becomes a call and a ToolMessage. */
function isFinishedToolPart(part: Part): boolean {
  return (
    (part.type.startsWith("tool-") || part.type === "dynamic-tool") && ["output-available", "output-error", "output-denied"].includes(part.state as string)
  );
}

function toolNameOf(part: Part): string {
  return part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice("tool-".length);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A segment's text parts as content: one text as a string, several as text blocks. */
function contentOf(texts: string[]): string | { type: "text"; text: string }[] {
  return texts.length <= 1 ? (texts[0] ?? "") : texts.map((text) => ({ type: "text" as const, text }));
}

/** The parts a first segment has when its record leaves them out: one text, or for an answer one finished step of text. New objects each call. */
export function defaultParts(role: UIMessage["role"]): JsonValue[] {
  return role === "assistant" ? [{ type: "step-start" }, { type: "text", state: "done" }] : [{ type: "text" }];
}

/** The same, as the JSON a record's parts are compared with. */
const DEFAULT_PARTS = {
  user: JSON.stringify(defaultParts("user")),
  system: JSON.stringify(defaultParts("system")),
  assistant: JSON.stringify(defaultParts("assistant")),
};

/** A segment's record as stored: only what differs from the usual. */
function record(message: UIMessage, seg: number, parts: Part[], extra: { metadata?: unknown; text?: true } = {}): JsonValue {
  const out: Record<string, JsonValue> = {};
  if (seg > 0) Object.assign(out, { id: message.id, seg });
  const json = toJsonValue(parts) as JsonValue[];
  if (seg > 0 || JSON.stringify(json) !== DEFAULT_PARTS[message.role]) out.parts = json;
  if (seg === 0 && extra.metadata !== undefined) out.metadata = toJsonValue(extra.metadata);
  if (extra.text) out.text = true;
  return out;
}

/** Builds the segments of one message, in order. */
class SegmentBuilder {
  readonly out: BaseMessage[] = [];
  #parts: Part[] = [];
  #texts: string[] = [];
  #calls: { id: string; name: string; args: Record<string, unknown>; type: "tool_call" }[] = [];
  #results: Part[] = [];

  constructor(
    readonly message: UIMessage,
    readonly index: number,
    readonly previous: UIMessage["role"] | undefined,
  ) {}

  add(part: Part): void {
    if (isFinishedToolPart(part)) {
      const input = part.input;
      this.#calls.push({
        id: String(part.toolCallId),
        name: toolNameOf(part),
        args: isPlainObject(input) ? input : { input: input ?? null },
        type: "tool_call",
      });
      this.#results.push(part);
      return;
    }
    if (this.#results.length > 0) this.flush();
    if (part.type === "text") {
      const { text, ...rest } = part;
      if (typeof text !== "string") throw new InvalidMessageError(this.index, "parts.text", "a text part needs its text as a string");
      this.#texts.push(text);
      this.#parts.push(rest as Part);
      return;
    }
    this.#parts.push(part);
  }

  /** Ends the current segment (and the ToolMessages of its calls). */
  flush(): void {
    const { message } = this;
    const seg = this.out.length;
    const saved = record(message, seg, this.#parts, { metadata: message.metadata });
    const kwargs = this.#plain(saved) ? {} : { [UI_FIELD]: saved };
    const id = seg === 0 ? message.id : `${message.id}.${seg}`;
    const content = contentOf(this.#texts);
    if (message.role === "user") this.out.push(new HumanMessage({ id, content, additional_kwargs: kwargs }));
    else if (message.role === "system") this.out.push(new SystemMessage({ id, content, additional_kwargs: kwargs }));
    else this.out.push(new AIMessage({ id, content, additional_kwargs: kwargs, tool_calls: this.#calls }));
    for (const part of this.#results) this.out.push(this.#toolMessage(part));
    this.#parts = [];
    this.#texts = [];
    this.#calls = [];
    this.#results = [];
  }

  /**
   * True when the segment is a whole plain message that loads back the same
   * without its record: as LangChain's own message, a question is its text and an
   * answer one step of text. An answer must follow a question or system message
   * in the chat, so that it cannot be taken for a step of the answer before it.
   */
  #plain(saved: JsonValue): boolean {
    if (this.out.length > 0 || Object.keys(saved as object).length > 0 || this.#results.length > 0) return false;
    if (this.#texts.length !== 1 || (this.#texts[0] as string).length === 0) return false;
    return this.message.role !== "assistant" || this.previous === "user" || this.previous === "system";
  }

  #toolMessage(part: Part): ToolMessage {
    const seg = this.out.length;
    const id = `${this.message.id}.${seg}`;
    const toolCallId = String(part.toolCallId);
    if (part.state === "output-available") {
      const { output, ...rest } = part;
      const text = typeof output === "string";
      const kwargs = { [UI_FIELD]: record(this.message, seg, [rest as Part], text ? { text: true } : {}) };
      const content = text ? output : JSON.stringify(toJsonValue(output ?? null));
      return new ToolMessage({ id, content, tool_call_id: toolCallId, name: toolNameOf(part), additional_kwargs: kwargs });
    }
    if (part.state === "output-error") {
      const { errorText, ...rest } = part;
      const kwargs = { [UI_FIELD]: record(this.message, seg, [rest as Part]) };
      return new ToolMessage({
        id,
        content: String(errorText ?? ""),
        tool_call_id: toolCallId,
        name: toolNameOf(part),
        status: "error",
        additional_kwargs: kwargs,
      });
    }
    // Denied: the model is told so; the part keeps the approval as it was.
    const reason = (part.approval as { reason?: string } | undefined)?.reason;
    const kwargs = { [UI_FIELD]: record(this.message, seg, [part]) };
    return new ToolMessage({
      id,
      content: `The tool call was denied${reason ? `: ${reason}` : "."}`,
      tool_call_id: toolCallId,
      name: toolNameOf(part),
      status: "error",
      additional_kwargs: kwargs,
    });
  }
}

/** Checks a UI message's shape enough to store it, naming what is wrong. */
export function checkUIMessage(message: unknown, index: number): asserts message is UIMessage {
  if (!isPlainObject(message)) throw new InvalidMessageError(index, "", "a UI message must be an object");
  if (typeof message.id !== "string" || message.id.length === 0 || message.id.length > 256) {
    throw new InvalidMessageError(
      index,
      "id",
      "a UI message needs an id of 1 to 256 characters to be saved (give the response one with toUIMessageStreamResponse's generateMessageId)",
    );
  }
  if (!["user", "assistant", "system"].includes(message.role as string))
    throw new InvalidMessageError(index, "role", `a UI message's role is "user", "assistant" or "system", got ${JSON.stringify(message.role)}`);
  if (!Array.isArray(message.parts)) throw new InvalidMessageError(index, "parts", "a UI message needs a parts array");
  for (const part of message.parts) {
    if (!isPlainObject(part) || typeof part.type !== "string") throw new InvalidMessageError(index, "parts", "every part needs a string type");
  }
}

/** The stored segments of one UI message; `previous` is the role of the message before it in the chat. */
export function segmentsOf(message: UIMessage, index = 0, previous?: UIMessage["role"]): BaseMessage[] {
  checkUIMessage(message, index);
  const builder = new SegmentBuilder(message, index, previous);
  for (const part of message.parts) builder.add(part as Part);
  builder.flush();
  return builder.out;
}

/** Marks the segments of a response cut short, as the wrapper marks a partial answer. */
export function markPartial(segments: BaseMessage[], reason: "cancelled" | "failed"): BaseMessage[] {
  for (const segment of segments) segment.response_metadata = { ...segment.response_metadata, memoria_partial: reason };
  return segments;
}
