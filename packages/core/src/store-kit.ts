/**
 * `@memoria/core/store-kit`: what a store author uses. `defineStore(engine)` turns
 * a few string-moving primitives into a whole `HistoryStore`
 * (docs/write-your-own-store.md); the helpers below are for stores and wrappers
 * that do more than the kit does for them. An app needs none of it: its API is
 * `@memoria/core`.
 */
export { defineStore } from "./store-kit/define-store.js";
export {
  type DecodedReads,
  type EngineCalls,
  type EngineCapabilities,
  type EngineInfo,
  type EngineLock,
  type EngineSession,
  LOCK_LOST,
  type LockLost,
  type StoreEngine,
  type TextReads,
  type TurnWrite,
} from "./store-kit/store-engine.js";

// The contract's own types and errors, so a store module imports from one place.
export {
  LockLostError,
  MemoriaError,
  StoreUnavailableError,
  type WriteOutcome,
  withTimeout,
} from "./errors.js";
export {
  type AppendOptions,
  type AppendResult,
  type FencedWriteOptions,
  type HistoryStore,
  type ListOptions,
  type LockOptions,
  type ReadOptions,
  type SessionPage,
  type StoreCapabilities,
  StoreClosedError,
  type TurnLock,
  SEALED_ROLE,
  namedValues,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
} from "./history-store.js";
export { type OpenTurn, type TurnOptions, type TurnSaveOptions, composedTurn, turnWith } from "./open-turn.js";
export { type JsonValue, toJsonValue } from "./json-value.js";
export { stateEntries } from "./state-writes.js";
export {
  type SessionKey,
  type SessionKeyFilter,
  createKeyFilter,
  createSessionKey,
  decodeSessionKey,
  encodeSessionKey,
  keyMatches,
  validateSessionFields,
} from "./session-key.js";
export { checkScopeFields } from "./scope-key.js";
export { IntegrityError } from "./access.js";
export {
  CODEC_VERSION,
  type EncodedMessage,
  type StoredMessageType,
  encodeMessage,
  encodeMessages,
  serializeMessage,
  toStoredText,
} from "./message-codec.js";
export { decodeFrozenMessage, decodeMessage, decodeMessages } from "./message-decoding.js";
export {
  type CheckedPatch,
  type InfoPage,
  type InfoPatch,
  type SessionInfo,
  afterCursor,
  byRecent,
  checkInfoPatch,
} from "./session-info.js";
export { type TailReplacement, checkTail } from "./message-edits.js";
export { StoreChatMessageHistory } from "./store-chat-history.js";
export { type PolledLock, lockTimes, pollForLock } from "./lock-polling.js";
export { SessionLocks } from "./turn-lock.js";
export { loadPeerDependency } from "./load-peer.js";
export { randomId } from "./random-id.js";
export type { QueryTerm, RecallHit, RecallIndex, RecallItem, RecallSelector } from "./recall-index.js";
