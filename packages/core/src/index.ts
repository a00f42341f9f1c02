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
  withTimeout,
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
  sessionKeyId,
  validateSessionFields,
} from "./session-key.js";
export { type EverySessionOptions, everySession } from "./every-session.js";
export { SCOPE_FIELD, checkScopeFields, isScopeKey, listedBy, scopeFilterOf, scopeKeyOf, withoutScopes } from "./scope-key.js";
export { type QueryTerm, type RecallHit, type RecallIndex, type RecallItem, type RecallSelector, checkRecallK, checkRecallSelector, dotProduct, topK, unitVector } from "./recall-index.js";
export { BM25_B, BM25_K1, type QueryGroup, queryGroups, termCounts } from "./lexical-ranking.js";
export { type HeldRecallItem, HeldRecallItems } from "./held-recall-items.js";
export { type JsonValue, cloneJson, toJsonValue } from "./json-value.js";
export { writeStates } from "./state-writes.js";
export {
  CODEC_VERSION,
  type EncodedMessage,
  type StoredMessageType,
  encodeMessage,
  encodeMessages,
  encodePayloads,
  toStoredText,
  serializeMessage,
} from "./message-codec.js";
export { decodeFrozenMessage, decodeMessage, decodeMessages } from "./message-decoding.js";
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
  listLimit,
  namedValues,
  readWindow,
  refuseSealed,
  requireFilterField,
  SEALED_ROLE,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
} from "./history-store.js";
export {
  type CheckedPatch,
  type InfoPage,
  type InfoPatch,
  MAX_METADATA_BYTES,
  MAX_TITLE_LENGTH,
  type SessionInfo,
  afterCursor,
  byRecent,
  checkInfoPatch,
  parseRecentCursor,
  recentCursor,
  recentPage,
  sessionInfo,
} from "./session-info.js";
export {
  EditConflictError,
  type MessageEdit,
  type TailReplacement,
  changedUnderEdit,
  checkCut,
  checkTail,
  planEdit,
} from "./message-edits.js";
export { type BranchOptions, type EditResult, branchSession, editSession } from "./session-edits.js";
export { StoreChatMessageHistory, isStoreChatMessageHistory } from "./store-chat-history.js";
export { type InMemoryStoreOptions, createInMemoryStore } from "./in-memory-store.js";
export { type MemoryLoadContext, type MemorySaveContext, type MemoryStrategy, type SessionState, wholeHistory } from "./memory-strategy.js";
export { SessionLocks } from "./turn-lock.js";
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
export { loadPeerDependency } from "./load-peer.js";
export { randomId } from "./random-id.js";
export { type PolledLock, lockTimes, pollForLock } from "./lock-polling.js";
export { LocalLeases } from "./local-leases.js";
export { memoryContext } from "./session-backend.js";
export { PromptPrinter } from "./prompt-printer.js";
export { type ModelCallRecord, type PromptPart, type PromptRecord, promptRecordName, promptRecords } from "./prompt-record.js";
export { type AccessAction, type AccessRequest, type Authorize, ForbiddenError, IntegrityError, checkAccess } from "./access.js";
