import { AIMessage, type BaseMessage, ChatMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { MemoriaError } from "./errors.js";
import { SEALED_ROLE } from "./history-store.js";
import { type JsonValue, cloneJson } from "./json-value.js";
import { CODEC_VERSION, COMMON_FIELDS, type EncodedMessage, type StoredMessageType, TYPE_FIELDS } from "./message-codec.js";

/*
 * Reading stored messages back: memoria's own format and every form LangChain
 * writes, into new LangChain messages (or frozen ones, for stores that share them).
 */

const TYPE_ALIASES: Record<string, StoredMessageType> = {
  human: "human",
  user: "human",
  humanmessage: "human",
  humanmessagechunk: "human",
  ai: "ai",
  assistant: "ai",
  aimessage: "ai",
  aimessagechunk: "ai",
  system: "system",
  systemmessage: "system",
  systemmessagechunk: "system",
  tool: "tool",
  toolmessage: "tool",
  toolmessagechunk: "tool",
  function: "function",
  functionmessage: "function",
  functionmessagechunk: "function",
  generic: "generic",
  chat: "generic",
  chatmessage: "generic",
  chatmessagechunk: "generic",
};

/** Scalar fields that older writers (LangChain Python among them) store as null. */
const NULLABLE = new Set(["id", "name", "tool_call_id", "role", "status"]);

function corrupt(reason: string): MemoriaError {
  return new MemoriaError("CORRUPT_DATA", `Cannot read a stored message: ${reason}.`);
}

/**
 * Brings any supported stored form to `{ type, data }`: memoria's own
 * ({@link EncodedMessage}), LangChain's `StoredMessage` (`toDict()`, and Python's
 * `message_to_dict`), the flattened `{ type, ...data }` rows of LangChain's
 * PostgresChatMessageHistory, LangChain's older `{ type, role, text }`, and
 * LangChain's serialized constructor form (`{ lc: 1, type: "constructor", id, kwargs }`).
 */
function normalize(stored: unknown): { type: StoredMessageType; data: Record<string, unknown> } {
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) {
    throw corrupt(`expected an object, got ${stored === null ? "null" : typeof stored}`);
  }
  const record = stored as Record<string, unknown>;
  let typeName: unknown = record.type;
  let data: unknown = record.data;
  if (record.lc === 1 && record.type === "constructor" && Array.isArray(record.id)) {
    typeName = record.id[record.id.length - 1];
    data = record.kwargs;
  } else if (data === undefined && "content" in record) {
    data = record; // LangChain's PostgresChatMessageHistory: { type, ...data }, flattened
  } else if (data === undefined && "text" in record) {
    data = { content: record.text, role: record.role };
  }
  if (typeof record.v === "number" && record.v > CODEC_VERSION) {
    throw corrupt(`format version ${record.v} is newer than this memoria (${CODEC_VERSION}); upgrade memoria`);
  }
  const type = typeof typeName === "string" ? TYPE_ALIASES[typeName.toLowerCase()] : undefined;
  if (type === undefined) throw corrupt(`unknown message type ${JSON.stringify(typeName)}`);
  if (typeof data !== "object" || data === null) throw corrupt(`message of type "${type}" has no data`);
  return { type, data: data as Record<string, unknown> };
}

const FIELDS_OF: Record<StoredMessageType, ReadonlySet<string>> = Object.fromEntries(
  (Object.keys(TYPE_FIELDS) as StoredMessageType[]).map((type) => [type, new Set([...COMMON_FIELDS, ...TYPE_FIELDS[type]])]),
) as unknown as Record<StoredMessageType, ReadonlySet<string>>;

/** True when `data` holds only fields of `type`, none of them undefined or a null scalar: it can be a message's fields as it is. */
function fieldsAsStored(type: StoredMessageType, data: Record<string, unknown>): boolean {
  const allowed = FIELDS_OF[type];
  for (const field in data) {
    const value = data[field];
    if (!allowed.has(field) || value === undefined || (value === null && NULLABLE.has(field))) return false;
  }
  return true;
}

/**
 * Decodes a stored message (an object, or the JSON text of one) into a new
 * LangChain message. The message shares nothing with `stored`.
 */
export function decodeMessage(stored: unknown): BaseMessage {
  // Text we parse ourselves is already a private copy; objects handed in are not.
  return typeof stored === "string" ? fromParsed(parseStored(stored)) : decodeParsed(stored, true);
}

/**
 * Decodes a read's stored JSON texts into new messages, in order (an item that is
 * not text is `CORRUPT_DATA`). Parses them all first (a sealed record, taken out
 * unparsed, becomes its message there), then builds the messages: two
 * tight loops run about 15 % faster than one that alternates `JSON.parse` and
 * LangChain's constructors (10,000 messages: 6.1 against 7.1 ms), which is most of
 * a whole read's time on a server store.
 */
export function decodeMessages(texts: readonly unknown[]): BaseMessage[] {
  const parsed = texts.map(parseStored);
  for (let i = 0; i < parsed.length; i++) parsed[i] = fromParsed(parsed[i]);
  return parsed as BaseMessage[];
}

/** A stored text read: a sealed record's message already (see `sealedEnvelope`), or the JSON value to decode. */
function parseStored(text: unknown): unknown {
  const envelope = typeof text === "string" ? sealedEnvelope(text) : undefined;
  return envelope === undefined ? parseJson(text) : new ChatMessage({ content: envelope, role: SEALED_ROLE });
}

/**
 * What `parseStored` gave, as a message. JSON never parses into an object of
 * ChatMessage's prototype, so that tells them apart (not `instanceof`: LangChain's
 * duck-typed `Symbol.hasInstance` costs more than the check is for).
 */
const fromParsed = (item: unknown): BaseMessage =>
  item !== null && typeof item === "object" && Object.getPrototypeOf(item) === ChatMessage.prototype ? (item as BaseMessage) : decodeParsed(item, false);

/*
 * A record sealed by encryptStore, as every store writes it: a chat message whose
 * content is the envelope. encryptStore opens the envelope itself, so its text is
 * taken out by position instead of parsed: a sealed record is the longest JSON a
 * store reads (base64url of the message, and more), and parsing it was a third of
 * an encrypted whole read. An envelope holds only letters, digits, `.`, `-` and `_`;
 * text with anything JSON escapes, or in another shape, is parsed as usual.
 */
const SEALED_HEAD = `{"v":${CODEC_VERSION},"type":"generic","data":{"content":"`;
const SEALED_TAIL = `","role":"${SEALED_ROLE}"}}`;

function sealedEnvelope(text: string): string | undefined {
  if (!text.startsWith(SEALED_HEAD) || !text.endsWith(SEALED_TAIL)) return undefined;
  const end = text.length - SEALED_TAIL.length;
  if (text.indexOf('"', SEALED_HEAD.length) !== end || text.indexOf("\\", SEALED_HEAD.length) !== -1) return undefined;
  return text.slice(SEALED_HEAD.length, end);
}

/** `copy`: the value is the caller's, so the message takes clones of its fields. */
function decodeParsed(parsed: unknown, copy: boolean): BaseMessage {
  const own = parsed as EncodedMessage;
  const { type, data } = typeof own === "object" && own !== null && own.v === CODEC_VERSION && own.data && FIELDS_OF[own.type] ? own : normalize(parsed);
  // The common case, memoria's own text: the parsed fields become the message's, with no copy.
  if (!copy && fieldsAsStored(type, data)) return construct(type, data);
  const allowed = FIELDS_OF[type];
  const fields: Record<string, unknown> = {};
  for (const field of Object.keys(data)) {
    if (!allowed.has(field)) continue;
    const value = (data as Record<string, unknown>)[field];
    if (value === undefined || (value === null && NULLABLE.has(field))) continue;
    fields[field] = copy ? cloneJson(value as JsonValue) : value;
  }
  return construct(type, fields);
}

/**
 * Freezes an object and every object reachable through its enumerable properties:
 * all a decoded message holds (its JSON fields, and LangChain's own fields, which
 * are enumerable; its one symbol-keyed property holds a boolean). `for … in` walks
 * keys from V8's enum cache; `Reflect.ownKeys` built an array per object, which
 * made freezing a message cost ten times its decoding.
 */
function deepFreeze<T extends object>(value: T): T {
  Object.freeze(value);
  for (const key in value) {
    const inner: unknown = value[key];
    if (typeof inner === "object" && inner !== null && !Object.isFrozen(inner)) deepFreeze(inner);
  }
  return value;
}

const EMPTY_OBJECT = Object.freeze({});
const EMPTY_ARRAY = Object.freeze([]);
const MESSAGES_NAMESPACE = Object.freeze(["langchain_core", "messages"]);

/**
 * Points the empty objects and lists a new message holds (its own, and its
 * `lc_kwargs`' copies: an AI message has eight), and LangChain's per-message
 * `lc_namespace` list, at shared frozen ones, so that freezing the message freezes
 * two objects instead of about a dozen: each `Object.freeze` costs more than the
 * message's decoding did. What a reader sees is equal, and as frozen.
 */
function shareEmpties(target: Record<string, unknown>): void {
  for (const key in target) {
    const inner = target[key];
    if (typeof inner !== "object" || inner === null) continue;
    if (Array.isArray(inner)) {
      if (inner.length === 0) target[key] = EMPTY_ARRAY;
      else if (key === "lc_namespace" && inner.length === 2 && inner[0] === MESSAGES_NAMESPACE[0] && inner[1] === MESSAGES_NAMESPACE[1])
        target[key] = MESSAGES_NAMESPACE;
    } else if (Object.getPrototypeOf(inner) === Object.prototype && !hasKeys(inner)) {
      target[key] = EMPTY_OBJECT;
    }
  }
}

function hasKeys(value: object): boolean {
  for (const _ in value) return true;
  return false;
}

/** {@link deepFreeze} of a message just decoded, sharing its empty parts first. */
function freezeMessage(message: BaseMessage): BaseMessage {
  const fields = message as unknown as Record<string, unknown>;
  shareEmpties(fields);
  const kwargs = fields.lc_kwargs;
  if (typeof kwargs === "object" && kwargs !== null && !Object.isFrozen(kwargs)) shareEmpties(kwargs as Record<string, unknown>);
  return deepFreeze(message);
}

/**
 * Decodes a stored message into a new message frozen all the way down, for a store
 * that keeps one decoded copy and gives that same object to every read (changing it
 * throws a `TypeError`, so no reader can change what another reads).
 */
export function decodeFrozenMessage(stored: unknown): BaseMessage {
  return freezeMessage(decodeMessage(stored));
}

/**
 * {@link decodeFrozenMessage} of an encoded message the caller made and gives away
 * (`encodeMessages`' output, which shares nothing with the message it came from): its
 * fields become the message's, frozen, without copying them first.
 * @internal the in-memory store's append.
 */
export function freezeEncodedMessage(encoded: EncodedMessage): BaseMessage {
  return freezeMessage(decodeParsed(encoded, false));
}

function construct(type: StoredMessageType, fields: Record<string, unknown>): BaseMessage {
  fields.content ??= "";
  if (type === "ai") {
    // Pass the lists explicitly: left undefined, AIMessage would re-parse
    // additional_kwargs.tool_calls and change what was stored.
    fields.tool_calls ??= [];
    fields.invalid_tool_calls ??= [];
  }
  switch (type) {
    case "human":
      return new HumanMessage(fields as never);
    case "ai":
      return new AIMessage(fields as never);
    case "system":
      return new SystemMessage(fields as never);
    case "tool":
      if (typeof fields.tool_call_id !== "string") throw corrupt("a tool message has no tool_call_id");
      return new ToolMessage(fields as never);
    case "function":
      // The classic openai-functions agent makes function messages without a name
      // under @langchain/core 1.x: kept as they came, so their session stays readable.
      if (fields.name !== undefined && typeof fields.name !== "string") throw corrupt("a function message has a name that is not a string");
      return new FunctionMessage(fields as never);
    case "generic":
      if (typeof fields.role !== "string") throw corrupt("a chat message has no role");
      return new ChatMessage(fields as never);
  }
}

function parseJson(text: unknown): unknown {
  if (typeof text !== "string") throw corrupt(`expected JSON text, got ${text === null ? "null" : typeof text}`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw corrupt(`not valid JSON (${(error as Error).message})`);
  }
}
