// Strategies: what of the stored history reaches the prompt, and the memory block it reaches it in.
export { bufferMemory } from "./buffer-memory.js";
export { type WindowMemoryOptions, windowMemory } from "./window-memory.js";
export { type TokenBufferMemoryOptions, tokenBufferMemory } from "./token-buffer-memory.js";
export { MAX_FOLD, type SummaryMemoryOptions, summaryMemory } from "./summary-memory.js";
export { type SummaryBufferMemoryOptions, summaryBufferMemory } from "./summary-buffer-memory.js";
export { readOnlyMemory } from "./read-only-memory.js";
export { DEFAULT_SUMMARY_PROMPT, type SummaryModel, extendSummary } from "./summarizer.js";
export { type ConversationTitlesOptions, DEFAULT_TITLE_PROMPT, type TitlingStrategy, cleanTitle, withTitles } from "./conversation-titles.js";
export {
  BUDGET_STATE,
  type BudgetEvent,
  type BudgetSpend,
  BudgetSpentError,
  type MemoryBudget,
  type MemoryBudgetOptions,
  budgetKeyOf,
  isBudgetKey,
  liveSpend,
  memoryBudget,
} from "./memory-budget.js";
export { type TokenCounter, countTextTokens, tiktokenCounter, truncateToTokens } from "./token-counter.js";
export { cutToFit, readLastTurns, startOfLastTurns, turnStarts } from "./turn-window.js";
export { ENTITY_EXTRACTION_PROMPT, ENTITY_SUMMARY_PROMPT, type EntityMemoryOptions, entityMemory } from "./entity-memory.js";
export { type KnowledgeGraphMemoryOptions, TRIPLE_EXTRACTION_PROMPT, type Triple, knowledgeGraphMemory } from "./knowledge-graph-memory.js";
export { type VectorRecallMemoryOptions, vectorRecallMemory } from "./vector-recall-memory.js";
export { loadEntities } from "./entity-memory.js";
export { loadTriples } from "./knowledge-graph-memory.js";
export { combineMemory } from "./combined-memory.js";
export {
  type MemoryKind,
  type MemoryPlacement,
  isMemoryMessage,
  memoryBlock,
  memoryMessage,
} from "./memory-block.js";
export { quoteItem, quoteLine, quoteMessages, quoteText } from "./quoting.js";
export { type CompactionOrigin, type ToolCompactionOptions, compactToolResults, toolResultCompaction } from "./tool-result-compaction.js";
