import { type BaseChatMessageHistory, type BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage, HumanMessage, getBufferString } from "@langchain/core/messages";
import { BaseMemory, type InputValues, type MemoryVariables, type OutputValues, getInputValue, getOutputValue } from "@langchain/core/memory";
import { type MemoryLoadContext, type MemoryStrategy, agentStepMessages, memoryContext } from "@memoria/core";

/** The options LangChain's chat memory classes take. */
export interface ChatMemoryInput {
  /** Where the messages live: any LangChain history; `store.history(key)` for a memoria store. @default an InMemoryChatMessageHistory */
  chatHistory?: BaseChatMessageHistory | BaseListChatMessageHistory;
  /** The prompt variable the memory fills. @default "history" */
  memoryKey?: string;
  /** Messages (for chat prompts) rather than a `Human: … / AI: …` string. @default false */
  returnMessages?: boolean;
  /** Which input value is the human's message; needed when the chain has several inputs. */
  inputKey?: string;
  /** Which output value is the AI's message. */
  outputKey?: string;
  /** @default "Human" */
  humanPrefix?: string;
  /** @default "AI" */
  aiPrefix?: string;
}

const CLASSIC_KEY = { sessionId: "classic-memory" };

/**
 * LangChain's `BaseMemory` over a memoria strategy: what the strategy loads is
 * the memory variable; `saveContext` appends the human and AI messages in one call
 * and lets the strategy update its state. With `store.history(key)` as
 * `chatHistory`, reads are windowed and state (summaries) persists in the store.
 */
export abstract class StrategyMemory extends BaseMemory {
  chatHistory: BaseChatMessageHistory | BaseListChatMessageHistory;
  memoryKey: string;
  returnMessages: boolean;
  inputKey?: string;
  outputKey?: string;
  humanPrefix: string;
  aiPrefix: string;

  protected abstract readonly strategy: MemoryStrategy;

  constructor(fields: ChatMemoryInput = {}) {
    super();
    this.chatHistory = fields.chatHistory ?? new InMemoryChatMessageHistory();
    this.memoryKey = fields.memoryKey ?? "history";
    this.returnMessages = fields.returnMessages ?? false;
    this.inputKey = fields.inputKey;
    this.outputKey = fields.outputKey;
    this.humanPrefix = fields.humanPrefix ?? "Human";
    this.aiPrefix = fields.aiPrefix ?? "AI";
  }

  get memoryKeys(): string[] {
    return [this.memoryKey];
  }

  protected context(input: BaseMessage[] = []): MemoryLoadContext {
    return memoryContext(this.chatHistory, CLASSIC_KEY, { input });
  }

  /** The loaded messages as the memory variable: messages, or a `Human: … / AI: …` string. */
  protected format(messages: BaseMessage[]): string | BaseMessage[] {
    return this.returnMessages ? messages : getBufferString(messages, this.humanPrefix, this.aiPrefix);
  }

  async loadMemoryVariables(_values: InputValues): Promise<MemoryVariables> {
    return { [this.memoryKey]: this.format(await this.strategy.load(this.context())) };
  }

  /**
   * Saves the human message, then, for a classic `AgentExecutor` with
   * `returnIntermediateSteps`, its tool calls and their results, then the answer.
   */
  async saveContext(inputValues: InputValues, outputValues: OutputValues): Promise<void> {
    const steps = agentStepMessages(outputValues.intermediateSteps) ?? [];
    const { intermediateSteps: _, ...outputs } = outputValues;
    const added = [
      new HumanMessage(String(getInputValue(inputValues, this.inputKey))),
      ...steps,
      new AIMessage(String(getOutputValue(outputs, this.outputKey))),
    ];
    await this.chatHistory.addMessages(added);
    await this.strategy.afterSave?.({ ...this.context(added.slice(0, 1)), added });
  }

  async clear(): Promise<void> {
    await this.chatHistory.clear();
  }
}
