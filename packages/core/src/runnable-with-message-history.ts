import type { CallbackManagerForChainRun } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import { Runnable, type RunnableConfig, mergeConfigs } from "@langchain/core/runnables";
import { concat } from "@langchain/core/utils/stream";
import { MemoriaError, type SaveError, SessionBusyError } from "./errors.js";
import { type HistoryStore, type LockOptions, turnIdOf } from "./history-store.js";
import type { OpenTurn } from "./open-turn.js";
import { type MemoryStrategy, isWholeHistory, wholeHistory } from "./memory-strategy.js";
import { childRun } from "./history-runs.js";
import { type Backend, historyBackend, loadContext, storeBackend } from "./session-backend.js";
import { encodeMessages } from "./message-codec.js";
import { type JsonValue, jsonBytesAtMost } from "./json-value.js";
import { DEFAULT_SESSION_FIELDS, type SessionKey, encodeSessionKey, sessionKeyFromConfig, validateSessionFields } from "./session-key.js";
import { isStoreChatMessageHistory } from "./store-chat-history.js";
import { SessionLocks } from "./turn-lock.js";
import { type Authorize, checkAccess } from "./access.js";
import { inputMessagesOf, withHistory, withMessages, withWiringHint } from "./turn-io.js";
import { type IncompleteTurnPolicy, type SaveErrorContext, Turn } from "./turn.js";
import { PromptRecorder, ReadPositions } from "./prompt-record.js";
import type { BusySessionPolicy, HistoryInput, InvocableLike, MessageHistoryFactory, RunnableWithMessageHistoryInput } from "./history-runnable-options.js";

export type { IncompleteTurnPolicy, SaveErrorContext } from "./turn.js";
export type { BusySessionPolicy, HistoryInput, InvocableLike, MessageHistoryFactory, RunnableWithMessageHistoryInput } from "./history-runnable-options.js";

const locksByBackend = new WeakMap<object, SessionLocks>();
function locksFor(identity: object): SessionLocks {
  let locks = locksByBackend.get(identity);
  if (!locks) {
    locks = new SessionLocks();
    locksByBackend.set(identity, locks);
  }
  return locks;
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
  readonly runnable: Runnable<any, RunOutput> | InvocableLike<RunOutput>;
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
  readonly recordPrompts: boolean;
  readonly #config: RunnableConfig;
  readonly #lockOptions: LockOptions;
  readonly #maxInputBytes: number;
  readonly #onSaveError?: RunnableWithMessageHistoryInput<RunOutput>["onSaveError"];
  readonly #onMemoryError?: RunnableWithMessageHistoryInput<RunOutput>["onMemoryError"];
  readonly #authorize?: Authorize;
  /** The input a missing session's error shows in its example call. */
  readonly #exampleInput: Record<string, string>;

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
    this.recordPrompts = fields.recordPrompts === true;
    this.#config = fields.config ?? {};
    this.#lockOptions = fields.lockOptions ?? {};
    this.#maxInputBytes = fields.maxInputBytes ?? 4 * 1024 * 1024;
    if (!Number.isSafeInteger(this.#maxInputBytes) || this.#maxInputBytes < 0) {
      throw new MemoriaError("INVALID_ARGUMENT", `maxInputBytes must be a whole number of bytes >= 0, got ${fields.maxInputBytes}.`);
    }
    this.#onSaveError = fields.onSaveError;
    this.#onMemoryError = fields.onMemoryError;
    if (fields.authorize !== undefined && typeof fields.authorize !== "function") {
      throw new MemoriaError("INVALID_ARGUMENT", "authorize must be a function ({ key, action, config }) => boolean.");
    }
    this.#authorize = fields.authorize;
    this.#exampleInput = { [this.inputMessagesKey ?? "input"]: "hello" };
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
    const turn = await this.#begin(input, config, runManager);
    try {
      let output: RunOutput;
      try {
        output = await this.runnable.invoke(turn.runnableInput, turn.runnableConfig());
      } catch (error) {
        await turn.saveIncomplete(this.saveOnError, undefined, "failed", error);
        throw withWiringHint(error, input, this);
      }
      await turn.save(turn.outputMessages(output));
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
    const turn = await this.#begin(input, config, runManager);
    let aggregate: RunOutput | undefined;
    let settled = false;
    try {
      try {
        // LangChain's stream() runs the chain up to its first chunk: a failure there is the turn failing too.
        const stream = await this.runnable.stream(turn.runnableInput, turn.runnableConfig());
        for await (const chunk of stream) {
          aggregate = aggregate === undefined ? chunk : (concat(aggregate as never, chunk as never) as RunOutput);
          yield chunk;
        }
      } catch (error) {
        settled = true;
        await turn.saveIncomplete(this.saveOnError, aggregate, "failed", error);
        throw withWiringHint(error, input, this);
      }
      settled = true;
      await turn.save(aggregate === undefined ? [] : turn.outputMessages(aggregate));
    } finally {
      // Reached without settling only when the consumer stopped early.
      if (!settled) await turn.saveIncomplete(this.saveOnCancel, aggregate, "cancelled");
      await turn.release();
    }
  };

  /**
   * Resolves the session, takes its turn lock, and loads the history for the
   * prompt (traced as `insertHistory` → `loadHistory` when the call has callbacks).
   */
  async #begin(input: RunInput, config: RunnableConfig, runManager?: CallbackManagerForChainRun): Promise<Turn> {
    const sessionKey = sessionKeyFromConfig(config.configurable, this.sessionFields, this.#exampleInput);
    const turnId = turnIdOf({ turnId: config.configurable?.turnId });
    if (this.#authorize) {
      await checkAccess(this.#authorize, { key: sessionKey, action: "read", config });
      if (!this.memory.readonly) await checkAccess(this.#authorize, { key: sessionKey, action: "append", config });
    }
    const inputMessages = inputMessagesOf(input, this);
    const unfenced = this.store ? storeBackend(this.store, sessionKey) : await this.#factoryBackend(sessionKey);
    if (unfenced.store) this.#checkInput(inputMessages); // refuse unstorable input before the model runs
    const { release, opened } = await this.#openTurn(unfenced, sessionKey, config.signal);
    try {
      const backend = opened && unfenced.inTurn ? unfenced.inTurn(opened, this.memory.firstRead) : unfenced;
      const turnIdGiven = config.configurable?.turnId !== undefined;
      const recording = this.recordPrompts ? { recorder: new PromptRecorder(), reads: new ReadPositions() } : undefined;
      const turn = (runnableInput: unknown, sent: () => readonly BaseMessage[]) =>
        new Turn(this, backend, sessionKey, turnId, turnIdGiven, config, inputMessages, runnableInput, sent, release, runManager, recording);
      // The default path (whole history, untraced) on a store that joins the turn's
      // history and input into one array (the in-memory store): the one copy of the turn.
      if (opened?.historyWith && !runManager && !recording && this.historyMessagesKey === undefined && isWholeHistory(this.memory)) {
        const joined = opened.historyWith(inputMessages);
        // The runnable owns this array and may add to it; what it was sent is the first `length`.
        const length = joined.length;
        return turn(withMessages(input, joined, this), () => (joined.length === length ? joined : joined.slice(0, length)));
      }
      const context = loadContext(backend, sessionKey, inputMessages, config);
      if (recording) {
        context.read = async (options) => {
          const messages = await backend.read(options);
          recording.reads.note(messages, options?.last);
          return messages;
        };
      }
      const load = () => this.memory.load(context);
      const history = await childRun(runManager?.getChild(), "insertHistory", sessionKey, input, (inner) =>
        childRun(inner, "loadHistory", sessionKey, input, load),
      );
      return turn(withHistory(input, history, inputMessages, this), () => history.concat(inputMessages));
    } catch (error) {
      await release();
      throw error;
    }
  }

  /** The session's backend from `getMessageHistory` (a memoria history is read through its store). */
  async #factoryBackend(sessionKey: SessionKey): Promise<Backend> {
    const factory = this.getMessageHistory as MessageHistoryFactory;
    const history = await factory(...this.sessionFields.map((field) => sessionKey[field] as string));
    if (isStoreChatMessageHistory(history)) return storeBackend(history.store, history.sessionKey);
    return historyBackend(history, factory, sessionKey);
  }

  /**
   * Opens the session's turn: queued in this process, then the store's turn (its
   * lease, renewed while the turn runs and fencing its writes, and the strategy's
   * first read under it). Releasing never rejects: a stored turn must not turn into a
   * failed call because a lock could not be given back (it expires on its own).
   */
  async #openTurn(backend: Backend, sessionKey: SessionKey, signal?: AbortSignal): Promise<{ release: () => Promise<void>; opened?: OpenTurn }> {
    if (this.busySession === "proceed") return { release: async () => {} };
    const locks = locksFor(backend.identity);
    const id = encodeSessionKey(sessionKey);
    if (this.busySession === "reject" && locks.isBusy(id)) throw new SessionBusyError(sessionKey);
    const releaseLocal = await locks.acquire(id, signal);
    let opened: OpenTurn | undefined;
    try {
      if (backend.openTurn) {
        const waitMs = this.busySession === "reject" ? 0 : this.#lockOptions.waitMs;
        opened = await backend.openTurn({ ...this.#lockOptions, waitMs, signal, read: this.memory.firstRead });
      }
    } catch (error) {
      releaseLocal();
      if (this.busySession === "reject" && MemoriaError.hasCode(error, "LOCK_TIMEOUT")) throw new SessionBusyError(sessionKey);
      throw error;
    }
    const release = async () => {
      try {
        await opened?.release();
      } catch {
        // expires with its lease; fencing keeps it harmless meanwhile
      } finally {
        releaseLocal();
      }
    };
    return { release, opened };
  }

  /** Refuses input the store could not keep, or larger than `maxInputBytes`. */
  #checkInput(inputMessages: BaseMessage[]): void {
    const encoded = encodeMessages(inputMessages);
    if (this.#maxInputBytes === 0) return;
    // The text is written only when its bound does not settle it: a turn's input is seldom near the limit.
    if (jsonBytesAtMost(encoded as unknown as JsonValue) <= this.#maxInputBytes) return;
    const bytes = Buffer.byteLength(JSON.stringify(encoded));
    if (bytes > this.#maxInputBytes) {
      throw new MemoriaError(
        "INVALID_INPUT",
        `The turn's input is ${bytes} bytes, more than maxInputBytes (${this.#maxInputBytes}); nothing was stored. Raise maxInputBytes if such inputs are expected.`,
      );
    }
  }

  /** @internal Stores a turn's messages, or hands the failure to `onSaveError`. */
  async _report(error: SaveError, context: SaveErrorContext): Promise<void> {
    if (!this.#onSaveError) throw error;
    await this.#onSaveError(error, context);
  }

  /** @internal The strategy failed after a stored turn: reported, never turned into a failed call. */
  async _reportMemoryError(error: unknown, context: SaveErrorContext): Promise<void> {
    try {
      if (this.#onMemoryError) await this.#onMemoryError(error, context);
      else
        process.emitWarning(
          `memoria: the memory strategy "${this.memory.name}" failed after turn ${context.turnId} was stored: ${(error as Error)?.message ?? error}`,
          { code: "MEMORIA_MEMORY_ERROR" },
        );
    } catch {
      // a failing hook must not fail a stored turn either
    }
  }
}

function oneOf<T extends string>(name: string, value: T, allowed: readonly T[]): T {
  if (!allowed.includes(value)) {
    throw new MemoriaError("INVALID_ARGUMENT", `${name} must be one of ${allowed.map((a) => `"${a}"`).join(", ")}; got ${JSON.stringify(value)}.`);
  }
  return value;
}
