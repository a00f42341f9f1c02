import type { BaseMessage } from "@langchain/core/messages";
import {
  type AppendOptions,
  type AppendResult,
  type EncodedMessage,
  type FencedWriteOptions,
  type HistoryStore,
  type InfoPatch,
  type JsonValue,
  type OpenTurn,
  MemoriaError,
  type SessionKey,
  type TailReplacement,
  type TurnOptions,
  decodeMessage,
} from "@memoria/core";
import { checkInfoPatch, encodeMessages, stateValue, namedValues, stateEntries, turnWith } from "@memoria/core/store-kit";
import { ForwardingStore } from "./forwarding-store.js";
import { type Redactor, patternRedactor } from "./redactors.js";

export interface RedactionOptions {
  /** Masks text before it is stored. @default patternRedactor() (e-mail, card, IBAN, phone, SSN) */
  redact?: Redactor;
  /** Also mask the string values of session state (summaries, entities, profiles), and titles and metadata. @default true */
  state?: boolean;
}

/** Every string inside `value`, masked. */
function deep(value: JsonValue, redact: Redactor): JsonValue {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => deep(item, redact));
  if (typeof value === "object" && value !== null) {
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value))
      Object.defineProperty(out, key, { value: deep(value[key] as JsonValue, redact), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}

/** Content as text or as blocks: the text of text blocks is masked, other blocks (images, files) are kept. */
function content(value: JsonValue, redact: Redactor): JsonValue {
  if (typeof value === "string") return redact(value);
  if (!Array.isArray(value)) return value;
  return value.map((block) => {
    if (typeof block === "string") return redact(block);
    const b = block as { [key: string]: JsonValue };
    return b && b.type === "text" && typeof b.text === "string" ? { ...b, text: redact(b.text) } : block;
  });
}

const ARGUMENT_FIELDS = ["tool_calls", "invalid_tool_calls", "additional_kwargs"] as const;

/** A copy of the message with its text, tool-call arguments and function-call arguments masked; ids, names and types are kept. */
export function redactMessage(encoded: EncodedMessage, redact: Redactor): EncodedMessage {
  const data: EncodedMessage["data"] = { ...encoded.data, content: content(encoded.data.content, redact) };
  for (const field of ARGUMENT_FIELDS) if (data[field] !== undefined) data[field] = deep(data[field] as JsonValue, redact);
  return { ...encoded, data };
}

/**
 * A store that masks messages (and by default state) before `inner` keeps them.
 * The turn that said something still gives the model the original: the wrapper
 * passes the turn's own messages to the model and stores them through this store.
 * Later turns read the masked text.
 */
export class RedactingStore extends ForwardingStore {
  readonly #redact: Redactor;
  readonly #state: boolean;

  constructor(inner: HistoryStore, options: RedactionOptions = {}) {
    super(inner);
    const redact = options.redact ?? patternRedactor();
    if (typeof redact !== "function") throw new MemoriaError("INVALID_ARGUMENT", "redact must be a function from text to text.");
    this.#redact = (text) => {
      const out = redact(text);
      if (typeof out !== "string") throw new MemoriaError("INVALID_ARGUMENT", `The redactor returned ${typeof out}, not text.`);
      return out;
    };
    this.#state = options.state ?? true;
  }

  override async append(key: SessionKey, messages: readonly BaseMessage[], options?: AppendOptions): Promise<AppendResult> {
    return this.inner.append(key, this.#mask(messages), options);
  }

  override async replaceTail(key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions): Promise<void> {
    return super.replaceTail(key, { ...tail, messages: this.#mask(tail.messages) }, options);
  }

  /** The inner store's turn, its save masked as `append` is. */
  override async openTurn(key: SessionKey, options?: TurnOptions): Promise<OpenTurn> {
    const turn = await this.inner.openTurn(key, options);
    return turnWith(turn.lock, turn.history, (messages, save) => turn.save(this.#mask(messages), save));
  }

  #mask(messages: readonly BaseMessage[]): BaseMessage[] {
    return encodeMessages(messages).map((message) => decodeMessage(redactMessage(message, this.#redact)));
  }

  override async setState(key: SessionKey, name: string, value: JsonValue, options?: FencedWriteOptions): Promise<void> {
    return this.inner.setState(key, name, this.#state ? deep(stateValue(value), this.#redact) : value, options);
  }

  override async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void> {
    if (!this.#state) return super.setStates(key, values, options);
    return super.setStates(key, namedValues(stateEntries(values).map(([name, value]) => [name, deep(value, this.#redact)])), options);
  }

  override async setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
    if (!this.#state) return super.setInfo(key, patch, options);
    const checked = checkInfoPatch(patch);
    const masked: InfoPatch = { createdAt: checked.createdAt, lastActiveAt: checked.lastActiveAt };
    if (checked.title !== undefined) masked.title = checked.title === null ? null : this.#redact(checked.title);
    if (checked.metadata !== undefined)
      masked.metadata = checked.metadata === null ? null : (deep(JSON.parse(checked.metadata), this.#redact) as InfoPatch["metadata"]);
    return super.setInfo(key, masked, options);
  }
}

/** Wraps any store so that messages are masked by `redact` before they are stored. */
export function redactStore(inner: HistoryStore, options?: RedactionOptions): RedactingStore {
  return new RedactingStore(inner, options);
}
