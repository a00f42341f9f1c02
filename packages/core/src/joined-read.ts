import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

export type JoinedRead = (key: SessionKey, after: readonly BaseMessage[]) => BaseMessage[];

/**
 * In-memory stores and their joined read: the whole history followed by other
 * messages in one new array (`storeBackend` uses it for the default turn). Not part
 * of the store contract, and keyed by the store object itself, so nothing that wraps
 * a store (encryption, authorization, a proxy) can pass it on by accident.
 */
export const joinedReads = new WeakMap<HistoryStore, JoinedRead>();

export function joinedReadOf(store: HistoryStore): JoinedRead | undefined {
  return joinedReads.get(store);
}
