// The classic BaseMemory classes, for LLMChain and other code written against LangChain's `memory`.
export { type ChatMemoryInput, StrategyMemory } from "./classic/strategy-memory.js";
export {
  BufferMemory,
  type BufferWindowMemoryInput,
  BufferWindowMemory,
  ConversationTokenBufferMemory,
  type ConversationTokenBufferMemoryInput,
} from "./classic/buffers.js";
export {
  ConversationSummaryBufferMemory,
  type ConversationSummaryBufferMemoryInput,
  ConversationSummaryMemory,
  type ConversationSummaryMemoryInput,
} from "./classic/summaries.js";
export { CombinedMemory, ReadOnlySharedMemory } from "./classic/composites.js";
export {
  ConversationKGMemory,
  type ConversationKGMemoryInput,
  EntityMemory,
  type EntityMemoryInput,
  VectorStoreRetrieverMemory,
  type VectorStoreRetrieverMemoryInput,
} from "./classic/knowledge.js";
