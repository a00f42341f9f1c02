import { HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, type IncompleteTurnPolicy, MemoriaError, type MemoryStrategy, type SessionKey, createSessionKey, memoryContext } from "@memoria/core";
import type { UIMessage, UIMessageStreamOnFinishCallback } from "ai";
import { strategiesOf } from "./memory-middleware.js";
import { type SaveChatOptions, type SaveChatResult, saveChat } from "./save-chat.js";

export interface ChatSaverOptions extends Pick<SaveChatOptions, "regenerate" | "lock"> {
  /**
   * What is saved when the stream ends early: stopped by the user (`isAborted`) or
   * left by a client that went away (`isCancelled`). `"partial"`: the new
   * messages and the answer as far as it went, marked partial; `"input"`: the
   * new messages without the answer; `"nothing"`: nothing of the turn. The same
   * policy as RunnableWithMessageHistory's `saveOnCancel`.
   * @default "partial"
   */
  saveOnCancel?: IncompleteTurnPolicy;
  /**
   * The long-term memory whose work follows a stored turn (the strategies given to
   * `memoriaMemory`): fact extraction, profile updates, recall indexing are handed
   * to the background once the turn is stored, durably, as after a wrapper's turn.
   */
  memory?: MemoryStrategy | readonly MemoryStrategy[];
  /** Receives a failure of that work; the turn is stored regardless. @default a process warning */
  onMemoryError?: (error: unknown) => void | Promise<void>;
  /** Called after each save with what it did. */
  onSaved?: (result: SaveChatResult) => void | Promise<void>;
  /**
   * Receives a failed save. Without it the failure is thrown from `onFinish`, so
   * the response stream ends in an error and the client knows the turn was not
   * stored; with it, the stream ends normally and the failure is yours to handle.
   */
  onSaveError?: (error: unknown) => void | Promise<void>;
}

const POLICIES: readonly IncompleteTurnPolicy[] = ["nothing", "input", "partial"];

/**
 * An `onFinish` for `toUIMessageStreamResponse` / `createUIMessageStream` that
 * saves the turn with {@link saveChat}: the new user message and the answer,
 * once, the answer marked partial when the stream was stopped. Pair it with
 * `result.consumeStream()` so an answer whose client disconnected is still
 * generated to the end and saved.
 */
export function chatSaver<UI extends UIMessage = UIMessage>(store: HistoryStore, key: SessionKey | Record<string, string>, options: ChatSaverOptions = {}): UIMessageStreamOnFinishCallback<UI> {
  const policy = options.saveOnCancel ?? "partial";
  const strategies = strategiesOf(options.memory, "chatSaver");
  const sessionKey = createSessionKey(key);
  if (!POLICIES.includes(policy)) throw new MemoriaError("INVALID_ARGUMENT", `chatSaver: saveOnCancel must be "partial", "input" or "nothing", got ${JSON.stringify(policy)}.`);
  return async ({ messages, responseMessage, isAborted, isCancelled }) => {
    const early = isAborted || isCancelled === true;
    if (early && policy === "nothing") return;
    const answered = responseMessage.parts.length > 0;
    const keep = early && (policy === "input" || !answered) ? messages.filter((message) => message.id !== responseMessage.id) : messages;
    const partial = early && policy === "partial" && answered ? { id: responseMessage.id, reason: "cancelled" as const } : undefined;
    try {
      const result = await saveChat(store, sessionKey, keep, { regenerate: options.regenerate, lock: options.lock, partial });
      await options.onSaved?.(result);
      if (strategies.length > 0 && result.stored.length > 0) {
        // The turn is stored: a failure of the work after it never fails the turn (the strategies catch up next time).
        await afterTurn(store, sessionKey, strategies, result).catch((error) =>
          options.onMemoryError ? options.onMemoryError(error) : process.emitWarning(`memoria: the memory work after a stored chat turn failed: ${String(error)}`),
        );
      }
    } catch (error) {
      if (!options.onSaveError) throw error;
      await options.onSaveError(error);
    }
  };
}

/** Hands the stored turn to the strategies' work after a turn. */
async function afterTurn(store: HistoryStore, sessionKey: SessionKey, strategies: MemoryStrategy[], result: SaveChatResult): Promise<void> {
  const input = result.stored.filter((message) => HumanMessage.isInstance(message));
  const context = { ...memoryContext(store, sessionKey, { input }), added: result.stored };
  for (const strategy of strategies) await strategy.afterSave?.(context);
}
