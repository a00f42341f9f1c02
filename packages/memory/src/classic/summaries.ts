import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import type { MemoryStrategy } from "@memoria/core";
import type { SummaryModel } from "../summarizer.js";
import { summaryBufferMemory } from "../summary-buffer-memory.js";
import { summaryMemory } from "../summary-memory.js";
import type { TokenCounter } from "../token-counter.js";
import { type ChatMemoryInput, StrategyMemory } from "./strategy-memory.js";

export interface ConversationSummaryMemoryInput extends ChatMemoryInput {
  /** The model that writes the summary. */
  llm: SummaryModel;
  /** The summarization prompt, with `{summary}` and `{new_lines}`. */
  prompt?: string;
}

/**
 * A running summary (LangChain's ConversationSummaryMemory): the memory variable
 * is the summary text, or one system message holding it. Each saveContext folds
 * only the new turn into it.
 */
export class ConversationSummaryMemory extends StrategyMemory {
  protected readonly strategy: MemoryStrategy;
  constructor(fields: ConversationSummaryMemoryInput) {
    super(fields);
    this.strategy = summaryMemory({ model: fields.llm, prompt: fields.prompt, preamble: "" });
  }

  protected override format(messages: BaseMessage[]): string | BaseMessage[] {
    const summary = messages.map((m) => String(m.content)).join("\n");
    return this.returnMessages ? [new SystemMessage(summary)] : summary;
  }
}

export interface ConversationSummaryBufferMemoryInput extends ConversationSummaryMemoryInput {
  /** Tokens of recent messages kept word for word. @default 2000 */
  maxTokenLimit?: number;
  /** The summary's own budget. @default 256 */
  maxSummaryTokens?: number;
  tokenCounter?: TokenCounter;
}

/**
 * Recent turns word for word and older ones summarized (LangChain's
 * ConversationSummaryBufferMemory), bounded and folded incrementally.
 */
export class ConversationSummaryBufferMemory extends StrategyMemory {
  maxTokenLimit: number;
  protected readonly strategy: MemoryStrategy;
  constructor(fields: ConversationSummaryBufferMemoryInput) {
    super(fields);
    this.maxTokenLimit = fields.maxTokenLimit ?? 2000;
    this.strategy = summaryBufferMemory({
      model: fields.llm,
      maxTokens: this.maxTokenLimit,
      maxSummaryTokens: fields.maxSummaryTokens,
      tokenCounter: fields.tokenCounter,
      prompt: fields.prompt,
      preamble: "",
    });
  }
}
