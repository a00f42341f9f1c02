import type { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import {
  type AppendOptions,
  type AppendResult,
  type FencedWriteOptions,
  type HistoryStore,
  type InfoPage,
  type InfoPatch,
  type JsonValue,
  type ListOptions,
  type LockOptions,
  type OpenTurn,
  type ReadOptions,
  type RecallIndex,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  type SessionPage,
  type TailReplacement,
  StoreChatMessageHistory,
  type TurnLock,
  type TurnOptions,
  createSessionKey,
} from "@memoria/core";
/**
 * A store that hands every call to `inner`: the base of wrappers that change a few
 * calls (redaction, authorization). Its `history(key)` goes through the wrapper.
 */
export class ForwardingStore implements HistoryStore {
  readonly name: string;
  readonly capabilities: HistoryStore["capabilities"];

  constructor(readonly inner: HistoryStore) {
    this.name = inner.name;
    this.capabilities = inner.capabilities;
  }

  read(key: SessionKey, options?: ReadOptions): Promise<BaseMessage[]> {
    return this.inner.read(key, options);
  }

  append(key: SessionKey, messages: readonly BaseMessage[], options?: AppendOptions): Promise<AppendResult> {
    return this.inner.append(key, messages, options);
  }

  clear(key: SessionKey): Promise<void> {
    return this.inner.clear(key);
  }

  count(key: SessionKey): Promise<number> {
    return this.inner.count(key);
  }

  list(filter?: SessionKeyFilter, options?: ListOptions): Promise<SessionPage> {
    return this.inner.list(filter, options);
  }

  delete(filter: SessionKeyFilter): Promise<number> {
    return this.inner.delete(filter);
  }

  getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
    return this.inner.getState(key, name);
  }

  setState(key: SessionKey, name: string, value: JsonValue, options?: FencedWriteOptions): Promise<void> {
    return this.inner.setState(key, name, value, options);
  }

  async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
    return this.inner.getAllState(key);
  }

  async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void> {
    return this.inner.setStates(key, values, options);
  }

  async trim(key: SessionKey, options: { oldest: number }): Promise<number> {
    return this.inner.trim(key, options);
  }

  async lock(key: SessionKey, options?: LockOptions): Promise<TurnLock> {
    return this.inner.lock(key, options);
  }

  async openTurn(key: SessionKey, options?: TurnOptions): Promise<OpenTurn> {
    return this.inner.openTurn(key, options);
  }

  async replaceTail(key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions): Promise<void> {
    return this.inner.replaceTail(key, tail, options);
  }

  async info(key: SessionKey): Promise<SessionInfo | undefined> {
    return this.inner.info(key);
  }

  async setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
    return this.inner.setInfo(key, patch, options);
  }

  async recent(filter?: SessionKeyFilter, options?: ListOptions): Promise<InfoPage> {
    return this.inner.recent(filter, options);
  }

  recallIndex(): RecallIndex | undefined {
    return this.inner.recallIndex();
  }

  async prune(options?: { batchSize?: number }): Promise<number> {
    return this.inner.prune(options);
  }

  async ready(): Promise<void> {
    return this.inner.ready();
  }

  history(key: SessionKey): BaseListChatMessageHistory {
    return new StoreChatMessageHistory(this, createSessionKey(key));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
