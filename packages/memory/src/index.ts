export { bufferMemory } from "./buffer-memory.js";
export { type WindowMemoryOptions, windowMemory } from "./window-memory.js";
export { type TokenBufferMemoryOptions, tokenBufferMemory } from "./token-buffer-memory.js";
export { MAX_FOLD, type SummaryMemoryOptions, summaryMemory } from "./summary-memory.js";
export { type SummaryBufferMemoryOptions, summaryBufferMemory } from "./summary-buffer-memory.js";
export { readOnlyMemory } from "./read-only-memory.js";
export { DEFAULT_SUMMARY_PROMPT, type SummaryModel, extendSummary } from "./summarizer.js";
export { type ConversationTitlesOptions, DEFAULT_TITLE_PROMPT, type TitlingStrategy, cleanTitle, withTitles } from "./conversation-titles.js";
export { type TokenCounter, countTextTokens, tiktokenCounter, truncateToTokens } from "./token-counter.js";
export { cutToFit, readLastTurns, startOfLastTurns, turnStarts } from "./turn-window.js";
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
export { ENTITY_EXTRACTION_PROMPT, ENTITY_SUMMARY_PROMPT, type EntityMemoryOptions, entityMemory } from "./entity-memory.js";
export { type KnowledgeGraphMemoryOptions, TRIPLE_EXTRACTION_PROMPT, type Triple, knowledgeGraphMemory } from "./knowledge-graph-memory.js";
export { type VectorRecallMemoryOptions, vectorRecallMemory } from "./vector-recall-memory.js";
export {
  ConversationKGMemory,
  type ConversationKGMemoryInput,
  EntityMemory,
  type EntityMemoryInput,
  VectorStoreRetrieverMemory,
  type VectorStoreRetrieverMemoryInput,
} from "./classic/knowledge.js";
export { loadEntities } from "./entity-memory.js";
export { loadTriples } from "./knowledge-graph-memory.js";
export { combineMemory } from "./combined-memory.js";
export { type BackgroundErrorHandler, type ScopeBatch, type ScopeJob, ScopeWork } from "./long-term/scope-work.js";
export { type Fact, type ExtractedFact, applyExtracted, holds, renderFacts, shownToModel } from "./long-term/facts.js";
export { EXTRACTION_SCHEMA, type ExtractionModel, FACT_EXTRACTION_PROMPT } from "./long-term/fact-extraction.js";
export { type FactMemory, type FactMemoryOptions, SUBJECT_RESOLUTION_PROMPT, factMemory } from "./long-term/fact-memory.js";
export { WORKING_MEMORY_PROMPT, type WorkingMemory, type WorkingMemoryOptions, workingMemory } from "./long-term/working-memory.js";
export { type RecalledPassage, type RecallMemory, type RecallMemoryOptions, recallMemory } from "./long-term/recall-memory.js";
// What recall memory is given, from @memoria/recall: embeddings that need no model, and the indexes.
export { HashingEmbeddings, type VectorStoreIndexOptions, type VectorStoreLike, exactIndex, itemId, vectorStoreIndex } from "@memoria/recall";
export {
  type MemoryKind,
  type MemoryPlacement,
  isMemoryMessage,
  memoryBlock,
  memoryMessage,
} from "./memory-block.js";
export { quoteItem, quoteLine, quoteMessages, quoteText } from "./quoting.js";
export { memoryTools } from "./tools/memory-tools.js";
export { type MemoryCall, MemoryToolRunner, type MemoryToolsOptions, ToolArgumentError } from "./tools/tool-calls.js";
export { MEMORY_TOOL_NAMES, MEMORY_TOOL_SPECS, type MemoryToolInput, type MemoryToolName } from "./tools/tool-specs.js";
export { FACTS_STATE, type FactSource, type StatedFact, forgetFact, readFacts, rememberFact } from "./long-term/fact-edits.js";
export { PROFILE_STATE, type ProfileChange, readProfile, updateProfile } from "./long-term/profile-edits.js";
export { type ScopeRecord, editScopeData } from "./long-term/scope-record.js";
export { type CompactionOrigin, type ToolCompactionOptions, compactToolResults, toolResultCompaction } from "./tool-result-compaction.js";
