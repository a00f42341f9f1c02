// Long-term memory: a user's facts with time, a profile, recall across conversations, and the work after a turn that keeps them.
export { type BackgroundErrorHandler, type ScopeBatch, type ScopeJob, ScopeWork } from "./long-term/scope-work.js";
export { type Fact, type ExtractedFact, applyExtracted, holds, renderFacts, shownToModel } from "./long-term/facts.js";
export { EXTRACTION_SCHEMA, type ExtractionModel, FACT_EXTRACTION_PROMPT } from "./long-term/fact-extraction.js";
export { type FactMemory, type FactMemoryOptions, SUBJECT_RESOLUTION_PROMPT, factMemory } from "./long-term/fact-memory.js";
export { WORKING_MEMORY_PROMPT, type WorkingMemory, type WorkingMemoryOptions, workingMemory } from "./long-term/working-memory.js";
export { type RecalledPassage, type RecallMemory, type RecallMemoryOptions, recallMemory } from "./long-term/recall-memory.js";
// What recall memory is given, from @memoria/recall: embeddings that need no model, and the indexes.
export { HashingEmbeddings, type VectorStoreIndexOptions, type VectorStoreLike, exactIndex, itemId, vectorStoreIndex } from "@memoria/recall";
export { FACTS_STATE, type FactSource, type StatedFact, forgetFact, readFacts, rememberFact } from "./long-term/fact-edits.js";
export { PROFILE_STATE, type ProfileChange, readProfile, updateProfile } from "./long-term/profile-edits.js";
export { type ScopeRecord, editScopeData } from "./long-term/scope-record.js";
