import type { BaseChatMessageHistory, BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage, BaseMessageLike } from "@langchain/core/messages";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import type { Authorize } from "./access.js";
import type { SaveError } from "./errors.js";
import type { HistoryStore, LockOptions } from "./history-store.js";
import type { MemoryStrategy } from "./memory-strategy.js";
import type { TurnKeys } from "./turn-io.js";
import type { IncompleteTurnPolicy, SaveErrorContext } from "./turn.js";

/* The options of RunnableWithMessageHistory, and the shapes it accepts. */

/**
 * What the wrapper accepts, whatever the wrapped runnable takes: a string (a human
 * message), a message, a list of messages or message-likes, or an object holding
 * one of those under `inputMessagesKey` beside the prompt's other variables.
 */
export type HistoryInput = string | BaseMessage | BaseMessageLike[] | Record<string, unknown>;

/** What a second turn does when its session is already running one. */
export type BusySessionPolicy = "wait" | "reject" | "proceed";

export type MessageHistoryFactory = (
  ...sessionValues: string[]
) => BaseChatMessageHistory | BaseListChatMessageHistory | Promise<BaseChatMessageHistory | BaseListChatMessageHistory>;

/**
 * What the wrapper can run: a LangChain `Runnable`, or anything with a Runnable's
 * `invoke` and `stream` (LangChain v1's `createAgent` returns such an agent, not a
 * `Runnable` subclass). Only those two are called.
 */
export interface InvocableLike<RunOutput = unknown> {
  // biome-ignore lint/suspicious/noExplicitAny: agents type their input and config their own way
  invoke(input: any, config?: any): Promise<RunOutput>;
  // biome-ignore lint/suspicious/noExplicitAny: as above; and an agent's chunks are not its output (createAgent streams state updates), so tying them to RunOutput refused `runnable: createAgent(…)` when written directly
  stream(input: any, config?: any): Promise<AsyncIterable<any>>;
}

export interface RunnableWithMessageHistoryInput<RunOutput = unknown> extends TurnKeys {
  /**
   * The runnable to wrap, e.g. `prompt.pipe(model)`. It receives the input with the
   * history added, so its input type differs from the wrapper's (`RunInput`).
   */
  // biome-ignore lint/suspicious/noExplicitAny: the wrapped runnable's input is reshaped by the wrapper
  runnable: Runnable<any, RunOutput> | InvocableLike<RunOutput>;
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
  /**
   * The largest input a turn may bring, in bytes of its stored form; a larger one
   * is refused with `INVALID_INPUT` before the model runs, and nothing is written.
   * Bounds what one request can add to a session. `0` turns the check off.
   * @default 4 MiB
   */
  maxInputBytes?: number;
  /** What is stored when the runnable throws (also mid-stream). @default "nothing" */
  saveOnError?: IncompleteTurnPolicy;
  /** What is stored when the consumer stops a stream early. @default "partial" */
  saveOnCancel?: IncompleteTurnPolicy;
  /**
   * Receives a failed save instead of the call rejecting. Without it, a failed
   * save rejects the call with `SaveError` (nothing of the turn is stored).
   */
  onSaveError?: (error: SaveError, context: SaveErrorContext) => void | Promise<void>;
  /**
   * Receives a failure of the memory strategy's work after a stored turn (a
   * summary or entity update). The call still resolves, since its turn is stored;
   * strategies catch up on the next turn. Without it, the failure is reported as a
   * process warning (`process.emitWarning`).
   */
  onMemoryError?: (error: unknown, context: SaveErrorContext) => void | Promise<void>;
  /**
   * Asked before a turn touches its session, with the call's config: `read` (to load
   * the history), then `append` (to save the turn; not asked by a read-only memory).
   * A denial fails the call with `ForbiddenError` before the model runs; nothing is
   * read or written.
   */
  authorize?: Authorize;
  /**
   * Keep, with each stored turn, what its model calls were given: the session's
   * messages by position (never copied), and the text of the rest (system prompt,
   * memory blocks), with the model's name and token counts. One state value per
   * turn (`prompt.<position>`, read with `promptRecords`), so it is encrypted,
   * expired and erased with the session; the studio shows it. Costs a count and a
   * state write per turn. @default false
   */
  recordPrompts?: boolean;
}
