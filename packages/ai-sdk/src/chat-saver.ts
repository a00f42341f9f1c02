import { HumanMessage } from "@langchain/core/messages";
import {
  type HistoryStore,
  type IncompleteTurnPolicy,
  MemoriaError,
  type MemoryStrategy,
  type SessionKey,
  createSessionKey,
  memoryContext,
} from "@memoria/core";
import type { UIMessage, UIMessageStreamOnFinishCallback } from "ai";
import { strategiesOf } from "./memory-middleware.js";
import { type SaveChatOptions, type SaveChatResult, saveChat } from "./save-chat.js";

export interface ChatSaverOptions extends Pick<SaveChatOptions, "regenerate" | "request" | "loaded"> {
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
   * Receives a failed save (a typed `MemoriaError`: the store unreachable, the
   * lock lost, …). The AI SDK calls `onFinish` once the answer has streamed, so a
   * failed save cannot fail the response, and a rejection there would go
   * unhandled: the saver never throws. Without this handler the failure is
   * reported as a process warning; the turn is not stored, and a reload shows it.
   */
  onSaveError?: (error: unknown) => void | Promise<void>;
}

const POLICIES: readonly IncompleteTurnPolicy[] = ["nothing", "input", "partial"];

/**
 * An `onFinish` for `toUIMessageStreamResponse` / `createUIMessageStream` that
 * saves the turn with {@link saveChat}: the new user message and the answer,
 * once, the answer marked partial when the stream was stopped. Pair it with
 * `consumeSseStream: consumeStream` in the same response options, so an answer
 * whose client disconnected is still generated to the end and saved whole
 * (`result.consumeStream()` alone does not: the response's stream is cancelled
 * and `onFinish` sees the answer cut short).
 */
export function chatSaver<UI extends UIMessage = UIMessage>(
  store: HistoryStore,
  key: SessionKey | Record<string, string>,
  options: ChatSaverOptions = {},
): UIMessageStreamOnFinishCallback<UI> {
  const policy = options.saveOnCancel ?? "partial";
  const strategies = strategiesOf(options.memory, "chatSaver");
  const sessionKey = createSessionKey(key);
  if (!POLICIES.includes(policy))
    throw new MemoriaError("INVALID_ARGUMENT", `chatSaver: saveOnCancel must be "partial", "input" or "nothing", got ${JSON.stringify(policy)}.`);
  return async ({ messages, responseMessage, isAborted, isCancelled }) => {
    const early = isAborted || isCancelled === true;
    if (early && policy === "nothing") return;
    const answered = responseMessage.parts.length > 0;
    const keep = early && (policy === "input" || !answered) ? messages.filter((message) => message.id !== responseMessage.id) : messages;
    const partial = early && policy === "partial" && answered ? { id: responseMessage.id, reason: "cancelled" as const } : undefined;
    try {
      const result = await saveChat(store, sessionKey, keep, { regenerate: options.regenerate, request: options.request, loaded: options.loaded, partial });
      await options.onSaved?.(result);
      if (strategies.length > 0 && result.stored.length > 0) {
        // The turn is stored: a failure of the work after it never fails the turn (the strategies catch up next time).
        await afterTurn(store, sessionKey, strategies, result).catch((error) =>
          report(error, options.onMemoryError, "the memory work after a stored chat turn failed"),
        );
      }
    } catch (error) {
      await report(error, options.onSaveError, "saving a chat turn failed; the turn is not stored");
    }
  };
}

/** Hands the stored turn to the strategies' work after a turn. */
async function afterTurn(store: HistoryStore, sessionKey: SessionKey, strategies: MemoryStrategy[], result: SaveChatResult): Promise<void> {
  const input = result.stored.filter((message) => HumanMessage.isInstance(message));
  const context = { ...memoryContext(store, sessionKey, { input }), added: result.stored };
  for (const strategy of strategies) await strategy.afterSave?.(context);
}

/** Hands a failure to the app's handler, or reports it as a process warning; a handler that throws is reported too. */
async function report(error: unknown, handler: ((error: unknown) => void | Promise<void>) | undefined, what: string): Promise<void> {
  try {
    if (handler) return await handler(error);
  } catch (thrown) {
    error = thrown;
  }
  process.emitWarning(`memoria: ${what}: ${error instanceof Error ? error.message : String(error)}`, {
    type: "MemoriaWarning",
    code: (error as { code?: string })?.code,
  });
}
