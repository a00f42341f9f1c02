import type { MemoryStrategy } from "@memoria/core";
import { bufferMemory } from "../buffer-memory.js";
import type { TokenCounter } from "../token-counter.js";
import { tokenBufferMemory } from "../token-buffer-memory.js";
import { windowMemory } from "../window-memory.js";
import { type ChatMemoryInput, StrategyMemory } from "./strategy-memory.js";

/** The whole conversation (LangChain's BufferMemory / ConversationBufferMemory). */
export class BufferMemory extends StrategyMemory {
  protected readonly strategy: MemoryStrategy = bufferMemory();
}

export interface BufferWindowMemoryInput extends ChatMemoryInput {
  /** How many of the latest turns to keep. @default 5 */
  k?: number;
}

/** The last `k` turns (LangChain's BufferWindowMemory), read from the store's end. */
export class BufferWindowMemory extends StrategyMemory {
  k: number;
  protected readonly strategy: MemoryStrategy;
  constructor(fields: BufferWindowMemoryInput = {}) {
    super(fields);
    this.k = fields.k ?? 5;
    this.strategy = windowMemory({ k: this.k });
  }
}

export interface ConversationTokenBufferMemoryInput extends ChatMemoryInput {
  /** @default 2000 */
  maxTokenLimit?: number;
  /** @default js-tiktoken cl100k_base */
  tokenCounter?: TokenCounter;
  /** Accepted for compatibility; tokens are counted by `tokenCounter`. */
  llm?: unknown;
}

/** The most recent whole turns within `maxTokenLimit` tokens (LangChain's ConversationTokenBufferMemory). */
export class ConversationTokenBufferMemory extends StrategyMemory {
  maxTokenLimit: number;
  protected readonly strategy: MemoryStrategy;
  constructor(fields: ConversationTokenBufferMemoryInput = {}) {
    super(fields);
    this.maxTokenLimit = fields.maxTokenLimit ?? 2000;
    // One turn at a time, as LangChain trims.
    this.strategy = tokenBufferMemory({ maxTokens: this.maxTokenLimit, tokenCounter: fields.tokenCounter, refillFraction: 1 });
  }
}
