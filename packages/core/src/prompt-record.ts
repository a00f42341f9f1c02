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
  /** The run whose calls these are, for a door that records one call at a time (see {@link recordModelCall}). */
  run?: string;
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

  /** The call `runId` as captured so far, forgotten here. */
  protected take(runId: string): CapturedCall | undefined {
    const call = this.#calls.get(runId);
    this.#calls.delete(runId);
    return call;
  }
}

/**
 * A LangChain callback handler that stores each chat model call it sees, as it
 * ends, in the prompt record of its turn in the session `key` (see
 * {@link recordModelCall}): for a run the wrapper does not make, e.g. a LangGraph
 * graph's, one handler per run. `MemoriaSaver#promptRecorder(config)` makes one
 * for a thread.
 */
export class SessionPromptRecorder extends PromptRecorder {
  override name = "memoria_session_prompt_recorder";
  readonly #run = crypto.randomUUID();

  constructor(
    private readonly store: HistoryStore,
    private readonly key: SessionKey,
  ) {
    super();
  }

  override async handleLLMEnd(output: LLMResult, runId: string): Promise<void> {
    await super.handleLLMEnd(output, runId);
    const call = this.take(runId);
    if (!call) return;
    await recordModelCall(this.store, this.key, {
      run: this.#run,
      messages: call.messages.map((message) => ({ type: message.getType(), text: message.text })),
      ...(call.model ? { model: call.model } : {}),
      ...(call.usage ? { usage: call.usage } : {}),
    });
  }

  override async handleLLMError(_error: unknown, runId: string): Promise<void> {
    this.take(runId);
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

/** A message part of a record that is not stored: its text, and the kind of memory block it is, if one. */
function unstoredPart(type: string, text: string): PromptPart {
  const memory = /^<memory kind="([a-z]+)">/.exec(text)?.[1];
  return memory ? { type, text, memory } : { type, text };
}

/** Appends a message to a call's parts: a stored position joins the range it continues. */
function pushPart(parts: PromptPart[], position: number | undefined, type: string, text: string): void {
  const last = parts.at(-1);
  if (position === undefined) parts.push(unstoredPart(type, text));
  else if (last && "stored" in last && last.stored[1] === position) last.stored[1] = position + 1;
  else parts.push({ stored: [position, position + 1] });
}

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
      for (const message of call.messages) pushPart(parts, positionOf(message), message.getType(), message.text);
      return { ...(call.model ? { model: call.model } : {}), parts, ...(call.usage ? { usage: call.usage } : {}) };
    }),
  };
}

/** The prompt records of a session, oldest turn first (none when no turn recorded one). */
export async function promptRecords(store: HistoryStore, key: SessionKey): Promise<PromptRecord[]> {
  const state = await store.getAllState(key);
  return Object.entries(state)
    .filter(([name]) => RECORD_NAME.test(name))
    .map(([, value]) => value as JsonValue as unknown as PromptRecord)
    .sort((a, b) => a.turn - b.turn);
}

/** A message a model call was given, as a door that is not the wrapper sees it: LangChain's type (`human`, `ai`, `system`, `tool`) and its text. */
export interface SeenMessage {
  type: string;
  text: string;
}

/** One model call as such a door sees it. */
export interface SeenModelCall {
  /** Names the run the call belongs to: the calls of one run (an agent's loop, an AI SDK request's steps) make one record. */
  run: string;
  messages: readonly SeenMessage[];
  model?: string;
  /**
   * Tokens the provider counted. A promise when the call is placed before it runs
   * (its messages are found in the store as it was before the call) and written
   * once the counts are known.
   */
  usage?: ModelUsage | PromiseLike<ModelUsage | undefined>;
}

type ModelUsage = { input: number; output: number };

/**
 * Adds one model call to its turn's prompt record, for the doors that see model
 * calls one at a time (the agent middleware, a LangGraph callback, the AI SDK
 * middleware). The call's messages are found among the session's newest stored
 * messages by type and text, in order. The turn is the position of the call's
 * newest human message, where it is stored or will be (after the last message
 * found before it); a message after it that is not stored yet takes the next
 * position, as the turn will store it. A call of another run replaces the turn's
 * record: the turn was retried or regenerated.
 *
 * It never rejects: a record that cannot be stored must not fail the model call it
 * describes. The failure is a process warning (`MEMORIA_PROMPT_RECORD`), once per kind.
 */
export async function recordModelCall(store: HistoryStore, key: SessionKey, call: SeenModelCall): Promise<void> {
  try {
    await storeCall(store, key, call);
  } catch (error) {
    const kind =
      error instanceof Error ? `${error.name}${(error as { code?: unknown }).code ? ` ${String((error as { code?: unknown }).code)}` : ""}` : typeof error;
    if (unrecorded.has(kind)) return;
    unrecorded.add(kind);
    const said = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 200);
    process.emitWarning(`memoria: a model call's prompt record was not stored: ${kind}: ${said}. The call went on; this is said once per kind of error.`, {
      code: "MEMORIA_PROMPT_RECORD",
    });
  }
}

/** How many messages past a call's own may be stored when it is recorded. */
const STORED_AFTER = 64;

/**
 * Each of a call's messages' stored position, or undefined: matched in order by
 * type and text from the start in `stored` (the session from position `first`)
 * that matches the most of them, the newest start of equals, so a text said twice
 * is placed where the rest of the conversation puts it.
 */
function align(messages: readonly SeenMessage[], stored: readonly BaseMessage[], first: number): (number | undefined)[] {
  let best: (number | undefined)[] = messages.map(() => undefined);
  let most = 0;
  for (let start = 0; start < stored.length; start++) {
    const found: (number | undefined)[] = [];
    let from = start;
    for (const message of messages) {
      let at = from;
      while (at < stored.length && !((stored[at] as BaseMessage).getType() === message.type && (stored[at] as BaseMessage).text === message.text)) at++;
      if (at < stored.length) {
        found.push(first + at);
        from = at + 1;
      } else found.push(undefined);
    }
    const matched = found.filter((position) => position !== undefined).length;
    if (matched >= most && matched > 0) {
      best = found;
      most = matched;
    }
  }
  return best;
}

/** Kinds of error a prompt record failed with, already warned of in this process. */
const unrecorded = new Set<string>();

async function storeCall(store: HistoryStore, key: SessionKey, call: SeenModelCall): Promise<void> {
  const count = await store.count(key);
  // Messages may be stored after the call's (a regenerated answer still stored as the call runs): read a margin more.
  const stored = count === 0 ? [] : await store.read(key, { last: Math.min(count, call.messages.length + STORED_AFTER) });
  const found = align(call.messages, stored, count - stored.length);
  const human = call.messages.findLastIndex((message) => message.type === "human");
  const before = found.slice(0, Math.max(human, 0)).findLast((position) => position !== undefined);
  const turn = human === -1 ? count : (found[human] ?? (before === undefined ? count : before + 1));
  // The turn's own messages the store does not hold yet: the positions it will store them at.
  let next = turn;
  const parts: PromptPart[] = [];
  for (const [i, message] of call.messages.entries()) {
    const ownTurn = human !== -1 && i >= human;
    const position = found[i] ?? (ownTurn && message.type !== "system" ? next : undefined);
    if (ownTurn && position !== undefined) next = position + 1;
    pushPart(parts, position, message.type, message.text);
  }
  const usage = await call.usage;
  const name = promptRecordName(turn);
  const earlier = (await store.getState(key, name)) as PromptRecord | undefined;
  const made: ModelCallRecord = { ...(call.model ? { model: call.model } : {}), parts, ...(usage ? { usage } : {}) };
  const calls = earlier?.run === call.run ? [...earlier.calls, made] : [made];
  const record: PromptRecord = { turn, at: new Date().toISOString(), calls, run: call.run };
  await store.setState(key, name, record as unknown as JsonValue);
}
