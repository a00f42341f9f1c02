import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import type { JsonValue } from "./json-value.js";
import type { HistoryStore } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

/**
 * One message a model call was given: stored messages of the session by position
 * (`[from, to)`, consecutive ones as one range), or a message that is not stored
 * (the system prompt, a memory block, a template's text) with its text.
 */
export type PromptPart = { stored: [from: number, to: number] } | { type: string; text: string; memory?: string };

/** What one model call of a turn was given, and what it reported. */
export interface ModelCallRecord {
  /** The model's name, as LangChain reports it (`ls_model_name`, or the call's `model`). */
  model?: string;
  parts: PromptPart[];
  /** Tokens the provider counted, when it said. */
  usage?: { input: number; output: number };
}

/** What the model calls of one turn were given: the `recordPrompts` option of the wrapper keeps one per turn. */
export interface PromptRecord {
  /** Position of the turn's first stored message. */
  turn: number;
  /** When the turn was stored (ISO 8601). */
  at: string;
  calls: ModelCallRecord[];
}

/** The state name of a turn's record: `prompt.<position of its first message>`. */
export const promptRecordName = (turn: number) => `prompt.${turn}`;
const RECORD_NAME = /^prompt\.(\d+)$/;

interface CapturedCall {
  messages: readonly BaseMessage[];
  model?: string;
  usage?: { input: number; output: number };
}

/** Collects, for one turn, each chat model call's input messages, model name and token counts. */
export class PromptRecorder extends BaseCallbackHandler {
  name = "memoria_prompt_recorder";
  override awaitHandlers = true;
  readonly #calls = new Map<string, CapturedCall>();

  override async handleChatModelStart(
    _llm: unknown,
    messages: BaseMessage[][],
    runId: string,
    _parent?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
  ): Promise<void> {
    const invocation = extraParams?.invocation_params as { model?: unknown; model_name?: unknown } | undefined;
    const model = metadata?.ls_model_name ?? invocation?.model ?? invocation?.model_name;
    this.#calls.set(runId, { messages: messages[0] ?? [], model: typeof model === "string" ? model : undefined });
  }

  override async handleLLMEnd(output: LLMResult, runId: string): Promise<void> {
    const call = this.#calls.get(runId);
    if (!call) return;
    const message = (output.generations[0]?.[0] as { message?: { usage_metadata?: { input_tokens: number; output_tokens: number } } } | undefined)?.message;
    const tokens = output.llmOutput?.tokenUsage as { promptTokens?: number; completionTokens?: number } | undefined;
    if (message?.usage_metadata) call.usage = { input: message.usage_metadata.input_tokens, output: message.usage_metadata.output_tokens };
    else if (tokens?.promptTokens !== undefined) call.usage = { input: tokens.promptTokens, output: tokens.completionTokens ?? 0 };
  }

  get calls(): readonly CapturedCall[] {
    return [...this.#calls.values()];
  }
}

/** Where the turn's messages came from: each message object read from the session, with its position. */
export class ReadPositions {
  readonly #reads: { messages: readonly BaseMessage[]; last?: number }[] = [];

  /** Notes a read of the session (`last`: the read asked for the newest `last` messages). */
  note(messages: readonly BaseMessage[], last: number | undefined): void {
    this.#reads.push({ messages, last });
  }

  /** Each read message's position, now that the session held `before` messages when the turn began. */
  positions(before: number): Map<BaseMessage, number> {
    const found = new Map<BaseMessage, number>();
    for (const { messages, last } of this.#reads) {
      const first = last === undefined ? 0 : before - messages.length;
      for (const [i, message] of messages.entries()) found.set(message, first + i);
    }
    return found;
  }
}

const sameText = (a: BaseMessage, b: BaseMessage) => a.getType() === b.getType() && a.text === b.text;

/**
 * The record of a turn: each captured call's messages as positions of the session
 * (a message read from it, or one of the turn's own stored messages) or as text.
 */
export function buildPromptRecord(calls: readonly CapturedCall[], read: Map<BaseMessage, number>, turn: readonly BaseMessage[], before: number): PromptRecord {
  const positionOf = (message: BaseMessage): number | undefined => {
    const known = read.get(message);
    if (known !== undefined) return known;
    // The turn's own messages: the same object, or (the input a template formatted anew) the same type and text.
    const own = turn.indexOf(message);
    if (own !== -1) return before + own;
    const similar = turn.findIndex((stored) => sameText(stored, message));
    return similar === -1 ? undefined : before + similar;
  };
  return {
    turn: before,
    at: new Date().toISOString(),
    calls: calls.map((call) => {
      const parts: PromptPart[] = [];
      for (const message of call.messages) {
        const position = positionOf(message);
        const last = parts.at(-1);
        if (position === undefined) {
          const text = message.text;
          const memory = /^<memory kind="([a-z]+)">/.exec(text)?.[1];
          parts.push(memory ? { type: message.getType(), text, memory } : { type: message.getType(), text });
        } else if (last && "stored" in last && last.stored[1] === position) last.stored[1] = position + 1;
        else parts.push({ stored: [position, position + 1] });
      }
      return { ...(call.model ? { model: call.model } : {}), parts, ...(call.usage ? { usage: call.usage } : {}) };
    }),
  };
}

/** The prompt records of a session, oldest turn first (none when no turn recorded one). */
export async function promptRecords(store: HistoryStore, key: SessionKey): Promise<PromptRecord[]> {
  const state = (await store.getAllState?.(key)) ?? {};
  return Object.entries(state)
    .filter(([name]) => RECORD_NAME.test(name))
    .map(([, value]) => value as JsonValue as unknown as PromptRecord)
    .sort((a, b) => a.turn - b.turn);
}
