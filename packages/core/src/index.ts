/**
 * `@memoria/core`: what an app uses (the wrapper, the store contract and its types,
 * errors, keys, the in-memory store, strategies, edits, prompt records). What a store
 * or wrapper author uses besides (the codec's batch calls, argument checks, paging,
 * lock polling) is `@memoria/core/store-kit`.
 */
export {
  ERROR_CODES,
  InvalidMessageError,
  InvalidSessionKeyError,
  LockLostError,
  LockTimeoutError,
  MemoriaError,
  type MemoriaErrorCode,
  SaveError,
  SessionBusyError,
  StoreUnavailableError,
  type WriteOutcome,
  writeOutcomeOf,
} from "./errors.js";
export {
  DEFAULT_SESSION_FIELDS,
  MAX_KEY_VALUE_LENGTH,
  type SessionKey,
  type SessionKeyFilter,
  createKeyFilter,
  createSessionKey,
  decodeSessionKey,
  encodeSessionKey,
  keyMatches,
  sessionKeyFromConfig,
} from "./session-key.js";
export { type EverySessionOptions, everySession } from "./every-session.js";
export { SCOPE_FIELD, isScopeKey, scopeFilterOf, scopeKeyOf } from "./scope-key.js";
export type { QueryTerm, RecallHit, RecallIndex, RecallItem, RecallSelector } from "./recall-index.js";
export type { JsonValue } from "./json-value.js";
export { CODEC_VERSION, type EncodedMessage, type StoredMessageType, encodeMessage, serializeMessage } from "./message-codec.js";
export { decodeMessage } from "./message-decoding.js";
export {
  type AppendOptions,
  type AppendResult,
  DEFAULT_LIST_LIMIT,
  DEFAULT_LOCK_TTL_MS,
  DEFAULT_LOCK_WAIT_MS,
  type FencedWriteOptions,
  type HistoryStore,
  type ListOptions,
  type LockOptions,
  MAX_LIST_LIMIT,
  type ReadOptions,
  type SessionPage,
  type StoreCapabilities,
  StoreClosedError,
  type TurnLock,
  SEALED_ROLE,
} from "./history-store.js";
export type { OpenTurn, TurnOptions, TurnSaveOptions } from "./open-turn.js";
export { type InfoPage, type InfoPatch, MAX_METADATA_BYTES, MAX_TITLE_LENGTH, type SessionInfo } from "./session-info.js";
export { EditConflictError, type MessageEdit, type TailReplacement, planEdit } from "./message-edits.js";
export { type BranchOptions, type EditResult, branchSession, editSession } from "./session-edits.js";
export { StoreChatMessageHistory, isStoreChatMessageHistory } from "./store-chat-history.js";
export { type InMemoryStoreOptions, createInMemoryStore } from "./in-memory-store.js";
export { type MemoryLoadContext, type MemorySaveContext, type MemoryStrategy, type SessionState, wholeHistory } from "./memory-strategy.js";
export { type TurnKeys, inputMessagesOf, outputMessagesOf } from "./turn-io.js";
export { agentStepMessages } from "./agent-steps.js";
export {
  type BusySessionPolicy,
  type HistoryInput,
  type InvocableLike,
  type IncompleteTurnPolicy,
  type MessageHistoryFactory,
  RunnableWithMessageHistory,
  type RunnableWithMessageHistoryInput,
  type SaveErrorContext,
} from "./runnable-with-message-history.js";
export { memoryContext } from "./session-backend.js";
export { PromptPrinter } from "./prompt-printer.js";
export {
  type ModelCallRecord,
  type PromptPart,
  type PromptRecord,
  type SeenMessage,
  type SeenModelCall,
  SessionPromptRecorder,
  promptRecordName,
  promptRecords,
  recordModelCall,
} from "./prompt-record.js";
export { type AccessAction, type AccessRequest, type Authorize, ForbiddenError, IntegrityError, checkAccess } from "./access.js";
