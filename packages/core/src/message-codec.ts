import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import { InvalidMessageError, MemoriaError } from "./errors.js";
import { type JsonValue, NotJsonError, toJsonValue } from "./json-value.js";

/** The current version of the stored-message format. */
export const CODEC_VERSION = 1;

/** The message types memoria stores; the same names LangChain's `StoredMessage` uses. */
export type StoredMessageType = "human" | "ai" | "system" | "tool" | "function" | "generic";

/**
 * A message as stored: LangChain's `StoredMessage` shape (`{ type, data }`) plus a
 * format version. `data` holds only JSON, so every store can keep it as text or
 * as a document and give back exactly what was written.
 */
export interface EncodedMessage {
  v: typeof CODEC_VERSION;
  type: StoredMessageType;
  data: { content: JsonValue } & { [field: string]: JsonValue };
}

/** Fields every message may carry, and the extra fields of each type. */
export const COMMON_FIELDS = ["content", "id", "name", "additional_kwargs", "response_metadata"] as const;
export const TYPE_FIELDS: Record<StoredMessageType, readonly string[]> = {
  human: [],
  system: [],
  ai: ["tool_calls", "invalid_tool_calls", "usage_metadata"],
  tool: ["tool_call_id", "artifact", "status", "metadata"],
  function: [],
  generic: ["role"],
};
/** Every field a message of each type may carry, common ones first. */
const FIELDS_BY_TYPE = Object.fromEntries(Object.entries(TYPE_FIELDS).map(([type, fields]) => [type, [...COMMON_FIELDS, ...fields]])) as unknown as Record<
  StoredMessageType,
  readonly string[]
>;
/** Fields left out when they hold their constructor default, to keep rows small. */
const EMPTY_DEFAULTS = new Set(["additional_kwargs", "response_metadata", "tool_calls", "invalid_tool_calls"]);

function storedType(message: BaseMessage): StoredMessageType {
  const type = message.getType() as string;
  switch (type) {
    case "human":
    case "ai":
    case "system":
    case "tool":
    case "function":
    case "generic":
      return type;
    default:
      throw new InvalidMessageError(-1, "type", `messages of type "${type}" cannot be stored`);
  }
}

/**
 * An empty list, or a plain object with no keys: such a default field is left out,
 * checked before it is copied (anything else is checked by the copy) and again after
 * (a copy drops keys holding `undefined`).
 */
function isEmptyDefault(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.keys(value).length === 0;
}

/**
 * Encodes one message losslessly, or throws {@link InvalidMessageError} naming the
 * field that could not be kept. Chunks are stored as the whole message they add up
 * to (an `AIMessageChunk` becomes an AI message with its parsed tool calls).
 */
export function encodeMessage(message: BaseMessage, index = 0): EncodedMessage {
  if (!isBaseMessage(message)) {
    throw new InvalidMessageError(index, "", "expected a LangChain message (BaseMessage)");
  }
  let type: StoredMessageType;
  try {
    type = storedType(message);
  } catch (error) {
    throw new InvalidMessageError(index, "type", (error as InvalidMessageError).message);
  }
  const source = message as unknown as Record<string, unknown>;
  const data: Record<string, JsonValue> = {};
  for (const field of FIELDS_BY_TYPE[type]) {
    const raw = source[field];
    if (raw === undefined || (EMPTY_DEFAULTS.has(field) && isEmptyDefault(raw))) continue;
    let value: JsonValue;
    try {
      value = toJsonValue(raw, field);
    } catch (error) {
      if (error instanceof NotJsonError) throw new InvalidMessageError(index, error.path, error.reason);
      throw error;
    }
    if (EMPTY_DEFAULTS.has(field) && isEmptyDefault(value)) continue;
    data[field] = value;
  }
  if (typeof data.content !== "string" && !Array.isArray(data.content)) {
    throw new InvalidMessageError(index, "content", "content must be a string or an array of content blocks");
  }
  if (type === "tool" && typeof data.tool_call_id !== "string") {
    throw new InvalidMessageError(index, "tool_call_id", "a tool message needs a tool_call_id");
  }
  return { v: CODEC_VERSION, type, data: data as EncodedMessage["data"] };
}

/** Encodes a message to the JSON text stores keep. */
export function serializeMessage(message: BaseMessage, index = 0): string {
  return JSON.stringify(encodeMessage(message, index));
}

/** Encodes a whole turn, checking every message before anything is written. */
export function encodeMessages(messages: readonly BaseMessage[]): EncodedMessage[] {
  if (!Array.isArray(messages)) {
    throw new MemoriaError("INVALID_ARGUMENT", "append() takes an array of messages.");
  }
  return messages.map((message, index) => encodeMessage(message, index));
}

/**
 * JSON text of an encoded message (or of a record holding messages), refusing one
 * too large for a string (about 512 MB) with `InvalidMessageError` instead of
 * JavaScript's `RangeError`.
 */
export function toStoredText(value: unknown, index = 0): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) throw new InvalidMessageError(index, "", "it is too large to store as one piece of text");
    throw error;
  }
}

/** The messages as stored JSON texts, one per message (`encodeMessages`, then `toStoredText`). */
export function encodePayloads(messages: readonly BaseMessage[]): string[] {
  return encodeMessages(messages).map((message, index) => toStoredText(message, index));
}
