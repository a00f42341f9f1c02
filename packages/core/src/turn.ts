import type { CallbackManagerForChainRun } from "@langchain/core/callbacks/manager";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { childRun, ensureMessageIds } from "./history-runs.js";
import { SaveError } from "./errors.js";
import type { MemoryStrategy } from "./memory-strategy.js";
import { type Backend, loadContext } from "./session-backend.js";
import type { SessionKey } from "./session-key.js";
import { type TurnKeys, outputMessagesOf } from "./turn-io.js";
import { type PromptRecorder, type ReadPositions, buildPromptRecord, promptRecordName } from "./prompt-record.js";
import type { JsonValue } from "./json-value.js";

/**
 * What of a turn is stored when it does not complete:
 * - `"nothing"`: the turn leaves no trace;
 * - `"input"`: the turn's input messages only;
 * - `"partial"`: the input, and the output streamed so far (as one message, marked
 *   `response_metadata.memoria_partial`); outside streaming, the same as `"input"`.
 */
export type IncompleteTurnPolicy = "nothing" | "input" | "partial";

/** Passed to `onSaveError` and `onMemoryError` along with the error. */
export interface SaveErrorContext {
  sessionKey: SessionKey;
  turnId: string;
  /** The messages of the turn. */
  messages: readonly BaseMessage[];
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

/** What a turn needs of the wrapper that runs it. */
export interface TurnOwner extends TurnKeys {
  readonly memory: MemoryStrategy;
  _report(error: SaveError, context: SaveErrorContext): Promise<void>;
  _reportMemoryError(error: unknown, context: SaveErrorContext): Promise<void>;
}

/** One turn in flight: knows exactly what it adds, so nothing is found by re-reading. */
export class Turn {
  #released = false;

  constructor(
    private readonly owner: TurnOwner,
    private readonly backend: Backend,
    readonly sessionKey: SessionKey,
    readonly turnId: string,
    /** The application gave the turn id (`configurable.turnId`); otherwise it was made up for this call. */
    private readonly turnIdGiven: boolean,
    private readonly config: RunnableConfig,
    readonly inputMessages: BaseMessage[],
    readonly runnableInput: unknown,
    /** Every message the runnable was given: the history, then the input. */
    private readonly sent: () => readonly BaseMessage[],
    private readonly releaseLock: () => Promise<void>,
    private readonly runManager?: CallbackManagerForChainRun,
    /** With `recordPrompts`: what the model calls are given, and where the history's messages were read from. */
    private readonly recording?: { recorder: PromptRecorder; reads: ReadPositions },
  ) {}

  /** The messages `output` adds to the session: without the history and input that a thread-returning agent echoes. */
  outputMessages(output: unknown): BaseMessage[] {
    return outputMessagesOf(output, this.owner, () => ({ all: this.sent(), input: this.inputMessages }));
  }

  /**
   * The wrapped runnable's config: the wrapper's run as its parent, and, as
   * LangChain sets it, the session's chat history as `configurable.messageHistory`.
   */
  runnableConfig(): RunnableConfig {
    let callbacks: RunnableConfig["callbacks"] = this.runManager?.getChild();
    if (this.recording) {
      if (callbacks) callbacks.addHandler(this.recording.recorder, true);
      else callbacks = [this.recording.recorder];
    }
    // What patchConfig does, less its ensureConfig (the wrapper's config went through
    // it on the way in), and copied key by key: LangChain deletes a key of that config
    // (its runId), which leaves it an object V8 spreads about five times slower.
    const config: RunnableConfig = {};
    for (const name of Object.keys(this.config)) (config as Record<string, unknown>)[name] = (this.config as Record<string, unknown>)[name];
    config.configurable = { ...this.config.configurable, messageHistory: this.backend.chatHistory() };
    if (callbacks !== undefined) {
      delete config.runName; // the wrapper's run's name, not the child's
      config.callbacks = callbacks;
    }
    return config;
  }

  async save(outputMessages: BaseMessage[], turnError?: unknown): Promise<void> {
    if (this.owner.memory.readonly) return; // a read-only view stores nothing
    ensureMessageIds(outputMessages);
    const messages = [...this.inputMessages, ...outputMessages];
    let appended: boolean;
    try {
      appended = await childRun(
        this.runManager?.getChild(),
        "saveHistory",
        this.sessionKey,
        { messages: messages.length, turnId: this.turnId },
        // Without an afterSave that writes under the lock, nothing is written under it after this: the store may release it with the write.
        () =>
          this.backend.save(messages, this.turnId, {
            last: !this.recording && (this.owner.memory.afterSave === undefined || this.owner.memory.afterSaveUnlocked === true),
            keepTurnId: this.turnIdGiven,
          }),
        { memoria_messages: messages.length, memoria_turn_id: this.turnId },
      );
    } catch (cause) {
      const error = new SaveError(this.sessionKey, this.turnId, cause);
      if (turnError !== undefined) Object.assign(error, { turnError });
      await this.owner._report(error, { sessionKey: this.sessionKey, turnId: this.turnId, messages });
      return;
    }
    if (!appended) return; // a retry of a stored turn: its derived state was updated the first time
    if (this.recording) {
      try {
        await this.#record(messages);
      } catch (error) {
        await this.owner._reportMemoryError(error, { sessionKey: this.sessionKey, turnId: this.turnId, messages });
      }
    }
    try {
      await this.owner.memory.afterSave?.({ ...loadContext(this.backend, this.sessionKey, this.inputMessages, this.config), added: messages });
    } catch (error) {
      await this.owner._reportMemoryError(error, { sessionKey: this.sessionKey, turnId: this.turnId, messages });
    }
  }

  /** Keeps what the turn's model calls were given, as the turn's prompt record (a stored turn's failure here is reported, never the call's). */
  async #record(stored: readonly BaseMessage[]): Promise<void> {
    const { recorder, reads } = this.recording as NonNullable<Turn["recording"]>;
    if (recorder.calls.length === 0) return; // no model was called (a runnable without one)
    const before = (await this.backend.count()) - stored.length;
    const record = buildPromptRecord(recorder.calls, reads.positions(before), stored, before);
    await this.backend.state.set(promptRecordName(before), record as unknown as JsonValue);
  }

  async saveIncomplete(policy: IncompleteTurnPolicy, partialOutput: unknown, reason: "cancelled" | "failed", turnError?: unknown) {
    if (policy === "nothing") return;
    let output: BaseMessage[] = [];
    if (policy === "partial" && partialOutput !== undefined) {
      try {
        output = markPartial(this.outputMessages(partialOutput), reason);
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
