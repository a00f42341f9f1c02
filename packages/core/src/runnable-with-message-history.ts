import type { CallbackManagerForChainRun } from "@langchain/core/callbacks/manager";
import type { BaseChatMessageHistory, BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage, type BaseMessageLike } from "@langchain/core/messages";
import { Runnable, type RunnableConfig, mergeConfigs, patchConfig } from "@langchain/core/runnables";
import { concat } from "@langchain/core/utils/stream";
import { MemoriaError, SaveError, SessionBusyError } from "./errors.js";
import type { HistoryStore, LockOptions, TurnLock } from "./history-store.js";
import { type MemoryStrategy, wholeHistory } from "./memory-strategy.js";
import { type Backend, historyBackend, loadContext, storeBackend } from "./session-backend.js";
import { encodeMessages } from "./message-codec.js";
import {
  DEFAULT_SESSION_FIELDS,
  type SessionKey,
  encodeSessionKey,
  sessionKeyFromConfig,
  validateSessionFields,
} from "./session-key.js";
import { isStoreChatMessageHistory } from "./store-chat-history.js";
import { SessionLocks } from "./turn-lock.js";
import { type TurnKeys, inputMessagesOf, outputMessagesOf, withHistory } from "./turn-io.js";

/**
 * What the wrapper accepts, whatever the wrapped runnable takes: a string (a human
 * message), a message, a list of messages or message-likes, or an object holding
 * one of those under `inputMessagesKey` beside the prompt's other variables.
 */
export type HistoryInput = string | BaseMessage | BaseMessageLike[] | Record<string, unknown>;

/** What a second turn does when its session is already running one. */
export type BusySessionPolicy = "wait" | "reject" | "proceed";

/**
 * What of a turn is stored when it does not complete:
 * - `"nothing"`: the turn leaves no trace;
 * - `"input"`: the turn's input messages only;
 * - `"partial"`: the input, and the output streamed so far (as one message, marked
 *   `response_metadata.memoria_partial`); outside streaming, the same as `"input"`.
 */
export type IncompleteTurnPolicy = "nothing" | "input" | "partial";

export type MessageHistoryFactory = (
  ...sessionValues: string[]
) => BaseChatMessageHistory | BaseListChatMessageHistory | Promise<BaseChatMessageHistory | BaseListChatMessageHistory>;

/** Passed to `onSaveError` along with the error. */
export interface SaveErrorContext {
  sessionKey: SessionKey;
  turnId: string;
  /** The messages that could not be stored. */
  messages: readonly BaseMessage[];
}

export interface RunnableWithMessageHistoryInput<RunOutput = unknown> extends TurnKeys {
  /**
   * The runnable to wrap, e.g. `prompt.pipe(model)`. It receives the input with the
   * history added, so its input type differs from the wrapper's (`RunInput`).
   */
  // biome-ignore lint/suspicious/noExplicitAny: the wrapped runnable's input is reshaped by the wrapper
  runnable: Runnable<any, RunOutput>;
  /** Where sessions live. Preferred over `getMessageHistory`: reads are windowed, saves atomic and deduplicated. */
  store?: HistoryStore;
  /**
   * LangChain's way: a function from the session field values (in `sessionFields`
   * order) to a chat history. Used when no `store` is given.
   */
  getMessageHistory?: MessageHistoryFactory;
  /** Config merged under every call's config. */
  config?: RunnableConfig;
  /** The `configurable` fields that name a session. @default ["sessionId"] */
  sessionFields?: readonly string[];
  /** What of the history reaches the prompt. @default the whole history */
  memory?: MemoryStrategy;
  /** A second turn on a busy session waits, is rejected with `SessionBusyError`, or runs at once. @default "wait" */
  busySession?: BusySessionPolicy;
  /** Options for the store's cross-process turn lock, where it has one. */
  lockOptions?: LockOptions;
  /** What is stored when the runnable throws (also mid-stream). @default "nothing" */
  saveOnError?: IncompleteTurnPolicy;
  /** What is stored when the consumer stops a stream early. @default "partial" */
  saveOnCancel?: IncompleteTurnPolicy;
  /**
   * Receives a failed save instead of the call rejecting. Without it, a failed
   * save rejects the call with `SaveError` (nothing of the turn is stored).
   */
  onSaveError?: (error: SaveError, context: SaveErrorContext) => void | Promise<void>;
}

const locksByBackend = new WeakMap<object, SessionLocks>();
function locksFor(identity: object): SessionLocks {
  let locks = locksByBackend.get(identity);
  if (!locks) {
    locks = new SessionLocks();
    locksByBackend.set(identity, locks);
  }
  return locks;
}

/** A streamed output that never completed, as one message flagged partial. */
function markPartial(messages: BaseMessage[], reason: "cancelled" | "failed"): BaseMessage[] {
  return messages.map((message) => {
    if (message.getType() !== "ai") return message;
    const ai = message as AIMessage;
    return new AIMessage({
      content: ai.content,
      id: ai.id,
      name: ai.name,
      additional_kwargs: ai.additional_kwargs,
      response_metadata: { ...ai.response_metadata, memoria_partial: reason },
      tool_calls: ai.tool_calls,
      invalid_tool_calls: ai.invalid_tool_calls,
      usage_metadata: ai.usage_metadata,
    });
  });
}

/**
 * Wraps a runnable with a conversation memory: it reads the session named in
 * `config.configurable`, puts the history into the prompt, runs the runnable and
 * saves the new turn. A drop-in for `@langchain/core`'s class of the same name,
 * with windowed reads, atomic exactly-once saves and serialized turns.
 */
export class RunnableWithMessageHistory<RunInput = HistoryInput, RunOutput = unknown> extends Runnable<RunInput, RunOutput> {
  lc_namespace = ["memoria", "runnables"];

  // biome-ignore lint/suspicious/noExplicitAny: see RunnableWithMessageHistoryInput.runnable
  readonly runnable: Runnable<any, RunOutput>;
  readonly store?: HistoryStore;
  readonly getMessageHistory?: MessageHistoryFactory;
  readonly inputMessagesKey?: string;
  readonly outputMessagesKey?: string;
  readonly historyMessagesKey?: string;
  readonly sessionFields: readonly string[];
  readonly memory: MemoryStrategy;
  readonly busySession: BusySessionPolicy;
  readonly saveOnError: IncompleteTurnPolicy;
  readonly saveOnCancel: IncompleteTurnPolicy;
  readonly #config: RunnableConfig;
  readonly #lockOptions: LockOptions;
  readonly #onSaveError?: RunnableWithMessageHistoryInput<RunOutput>["onSaveError"];

  static override lc_name() {
    return "RunnableWithMessageHistory";
  }

  constructor(fields: RunnableWithMessageHistoryInput<RunOutput>) {
    super(fields);
    if (!fields.store && !fields.getMessageHistory) {
      throw new MemoriaError("INVALID_ARGUMENT", "RunnableWithMessageHistory needs a `store` (or LangChain's `getMessageHistory`).");
    }
    this.runnable = fields.runnable;
    this.store = fields.store;
    this.getMessageHistory = fields.getMessageHistory;
    this.inputMessagesKey = fields.inputMessagesKey;
    this.outputMessagesKey = fields.outputMessagesKey;
    this.historyMessagesKey = fields.historyMessagesKey;
    this.sessionFields = validateSessionFields(fields.sessionFields ?? DEFAULT_SESSION_FIELDS);
    this.memory = fields.memory ?? wholeHistory();
    this.busySession = oneOf("busySession", fields.busySession ?? "wait", ["wait", "reject", "proceed"]);
    this.saveOnError = oneOf("saveOnError", fields.saveOnError ?? "nothing", ["nothing", "input", "partial"]);
    this.saveOnCancel = oneOf("saveOnCancel", fields.saveOnCancel ?? "partial", ["nothing", "input", "partial"]);
    this.#config = fields.config ?? {};
    this.#lockOptions = fields.lockOptions ?? {};
    this.#onSaveError = fields.onSaveError;
  }

  override async invoke(input: RunInput, options?: Partial<RunnableConfig>): Promise<RunOutput> {
    return this._callWithConfig(this.#invokeTurn, input, mergeConfigs(this.#config, options));
  }

  override async *_streamIterator(input: RunInput, options?: Partial<RunnableConfig>): AsyncGenerator<RunOutput> {
    async function* once() {
      yield input;
    }
    yield* this._transformStreamWithConfig(once(), this.#streamTurn, mergeConfigs(this.#config, options));
  }

  readonly #invokeTurn = async (input: RunInput, options?: Partial<RunnableConfig>, runManager?: CallbackManagerForChainRun) => {
    const config = options ?? {};
    const turn = await this.#begin(input, config);
    try {
      let output: RunOutput;
      try {
        output = await this.runnable.invoke(turn.runnableInput, patchConfig(config, { callbacks: runManager?.getChild() }));
      } catch (error) {
        await turn.saveIncomplete(this.saveOnError, undefined, "failed", error);
        throw error;
      }
      await turn.save(outputMessagesOf(output, this));
      return output;
    } finally {
      await turn.release();
    }
  };

  readonly #streamTurn = async function* (
    this: RunnableWithMessageHistory<RunInput, RunOutput>,
    inputs: AsyncGenerator<RunInput>,
    runManager?: CallbackManagerForChainRun,
    options?: Partial<RunnableConfig>,
  ): AsyncGenerator<RunOutput> {
    const config = options ?? {};
    let input!: RunInput;
    for await (const chunk of inputs) input = chunk;
    const turn = await this.#begin(input, config);
    let aggregate: RunOutput | undefined;
    let settled = false;
    try {
      const stream = await this.runnable.stream(turn.runnableInput, patchConfig(config, { callbacks: runManager?.getChild() }));
      try {
        for await (const chunk of stream) {
          aggregate = aggregate === undefined ? chunk : (concat(aggregate as never, chunk as never) as RunOutput);
          yield chunk;
        }
      } catch (error) {
        settled = true;
        await turn.saveIncomplete(this.saveOnError, aggregate, "failed", error);
        throw error;
      }
      settled = true;
      await turn.save(aggregate === undefined ? [] : outputMessagesOf(aggregate, this));
    } finally {
      // Reached without settling only when the consumer stopped early.
      if (!settled) await turn.saveIncomplete(this.saveOnCancel, aggregate, "cancelled");
      await turn.release();
    }
  };

  /** Resolves the session, takes its turn lock, and loads the history for the prompt. */
  async #begin(input: RunInput, config: RunnableConfig): Promise<Turn> {
    const sessionKey = sessionKeyFromConfig(config.configurable, this.sessionFields, {
      [this.inputMessagesKey ?? "input"]: "hello",
    });
    const inputMessages = inputMessagesOf(input, this);
    const backend = await this.#backend(sessionKey);
    if (backend.store) encodeMessages(inputMessages); // refuse unstorable input before the model runs
    const release = await this.#lock(backend, sessionKey, config.signal);
    try {
      const history = await this.memory.load(loadContext(backend, sessionKey, inputMessages, config));
      return new Turn(this, backend, sessionKey, config, inputMessages, withHistory(input, history, inputMessages, this), release);
    } catch (error) {
      await release();
      throw error;
    }
  }

  async #backend(sessionKey: SessionKey): Promise<Backend> {
    if (this.store) return storeBackend(this.store, sessionKey);
    const factory = this.getMessageHistory as MessageHistoryFactory;
    const history = await factory(...this.sessionFields.map((field) => sessionKey[field] as string));
    if (isStoreChatMessageHistory(history)) return storeBackend(history.store, history.sessionKey);
    return historyBackend(history, factory, sessionKey);
  }

  async #lock(backend: Backend, sessionKey: SessionKey, signal?: AbortSignal): Promise<() => Promise<void>> {
    if (this.busySession === "proceed") return async () => {};
    const locks = locksFor(backend.identity);
    const id = encodeSessionKey(sessionKey);
    if (this.busySession === "reject" && locks.isBusy(id)) throw new SessionBusyError(sessionKey);
    const releaseLocal = await locks.acquire(id, signal);
    let storeLock: TurnLock | undefined;
    try {
      if (backend.lock) {
        const waitMs = this.busySession === "reject" ? 0 : this.#lockOptions.waitMs;
        storeLock = await backend.lock({ ...this.#lockOptions, waitMs, signal });
      }
    } catch (error) {
      releaseLocal();
      if (this.busySession === "reject" && MemoriaError.hasCode(error, "LOCK_TIMEOUT")) throw new SessionBusyError(sessionKey);
      throw error;
    }
    return async () => {
      try {
        await storeLock?.release();
      } finally {
        releaseLocal();
      }
    };
  }

  /** @internal Stores a turn's messages, or hands the failure to `onSaveError`. */
  async _report(error: SaveError, context: SaveErrorContext): Promise<void> {
    if (!this.#onSaveError) throw error;
    await this.#onSaveError(error, context);
  }
}

/** One turn in flight: knows exactly what it adds, so nothing is found by re-reading. */
/** What a turn needs of the wrapper that runs it. */
interface TurnOwner extends TurnKeys {
  readonly memory: MemoryStrategy;
  _report(error: SaveError, context: SaveErrorContext): Promise<void>;
}

class Turn {
  readonly turnId = crypto.randomUUID();
  #released = false;

  constructor(
    private readonly owner: TurnOwner,
    private readonly backend: Backend,
    readonly sessionKey: SessionKey,
    private readonly config: RunnableConfig,
    readonly inputMessages: BaseMessage[],
    readonly runnableInput: unknown,
    private readonly releaseLock: () => Promise<void>,
  ) {}

  async save(outputMessages: BaseMessage[], turnError?: unknown): Promise<void> {
    if (this.owner.memory.readonly) return; // a read-only view stores nothing
    const messages = [...this.inputMessages, ...outputMessages];
    try {
      await this.backend.save(messages, this.turnId);
    } catch (cause) {
      const error = new SaveError(this.sessionKey, this.turnId, cause);
      if (turnError !== undefined) Object.assign(error, { turnError });
      await this.owner._report(error, { sessionKey: this.sessionKey, turnId: this.turnId, messages });
      return;
    }
    await this.owner.memory.afterSave?.({ ...loadContext(this.backend, this.sessionKey, this.inputMessages, this.config), added: messages });
  }

  async saveIncomplete(policy: IncompleteTurnPolicy, partialOutput: unknown, reason: "cancelled" | "failed", turnError?: unknown) {
    if (policy === "nothing") return;
    let output: BaseMessage[] = [];
    if (policy === "partial" && partialOutput !== undefined) {
      try {
        output = markPartial(outputMessagesOf(partialOutput, this.owner), reason);
      } catch {
        output = []; // a partial output that is not messages yet: keep the input only
      }
    }
    await this.save(output, turnError);
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    await this.releaseLock();
  }
}

function oneOf<T extends string>(name: string, value: T, allowed: readonly T[]): T {
  if (!allowed.includes(value)) {
    throw new MemoriaError("INVALID_ARGUMENT", `${name} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}; got ${JSON.stringify(value)}.`);
  }
  return value;
}
