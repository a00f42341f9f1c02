import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  type AccessAction,
  type AppendOptions,
  type AppendResult,
  type Authorize,
  type FencedWriteOptions,
  type HistoryStore,
  type InfoPage,
  type InfoPatch,
  type JsonValue,
  type ListOptions,
  type LockOptions,
  type OpenTurn,
  MemoriaError,
  type ReadOptions,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  type SessionPage,
  type TailReplacement,
  type TurnLock,
  type TurnOptions,
  checkAccess,
  createKeyFilter,
  createSessionKey,
} from "@memoria/core";
import { ForwardingStore } from "./forwarding-store.js";

/**
 * A store that asks `authorize` before every call: `read` for reads, counts,
 * state and info; `append` for appends, state and info writes, the turn lock and a
 * turn (and `read` too for a turn that reads its history);
 * `list` for listing and `recent`; `delete` for edits (`replaceTail`),
 * for clear, trim and erasure by filter. A denial is a `ForbiddenError` and the
 * inner store is not called. `as(config)` gives a view whose checks carry the
 * caller's config (who is asking), e.g. one per request.
 */
export class GuardedStore extends ForwardingStore {
  constructor(
    inner: HistoryStore,
    readonly authorize: Authorize,
    readonly config?: RunnableConfig,
  ) {
    super(inner);
    if (typeof authorize !== "function") throw new MemoriaError("INVALID_ARGUMENT", "guardStore needs an authorize function.");
  }

  /** The same store, checking calls as made by the caller of `config`. */
  as(config: RunnableConfig): GuardedStore {
    return guardedAs(this.inner, this.authorize, config);
  }

  #check(key: SessionKey | SessionKeyFilter, action: AccessAction): Promise<void> {
    return checkAccess(this.authorize, { key, action, config: this.config });
  }

  override async read(key: SessionKey, options?: ReadOptions): Promise<BaseMessage[]> {
    await this.#check(createSessionKey(key), "read");
    return this.inner.read(key, options);
  }

  override async count(key: SessionKey): Promise<number> {
    await this.#check(createSessionKey(key), "read");
    return this.inner.count(key);
  }

  override async getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
    await this.#check(createSessionKey(key), "read");
    return this.inner.getState(key, name);
  }

  override async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
    await this.#check(createSessionKey(key), "read");
    return super.getAllState(key);
  }

  override async append(key: SessionKey, messages: readonly BaseMessage[], options?: AppendOptions): Promise<AppendResult> {
    await this.#check(createSessionKey(key), "append");
    return this.inner.append(key, messages, options);
  }

  override async setState(key: SessionKey, name: string, value: JsonValue, options?: FencedWriteOptions): Promise<void> {
    await this.#check(createSessionKey(key), "append");
    return this.inner.setState(key, name, value, options);
  }

  override async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void> {
    await this.#check(createSessionKey(key), "append");
    return super.setStates(key, values, options);
  }

  override async lock(key: SessionKey, options?: LockOptions): Promise<TurnLock> {
    await this.#check(createSessionKey(key), "append");
    return super.lock(key, options);
  }

  override async openTurn(key: SessionKey, options?: TurnOptions): Promise<OpenTurn> {
    const checked = createSessionKey(key);
    await this.#check(checked, "append");
    if (options?.read) await this.#check(checked, "read"); // it reads with the lock
    return super.openTurn(key, options);
  }

  override async info(key: SessionKey): Promise<SessionInfo | undefined> {
    await this.#check(createSessionKey(key), "read");
    return super.info(key);
  }

  override async setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
    await this.#check(createSessionKey(key), "append");
    return super.setInfo(key, patch, options);
  }

  override async recent(filter?: SessionKeyFilter, options?: ListOptions): Promise<InfoPage> {
    await this.#check(createKeyFilter(filter), "list");
    return super.recent(filter, options);
  }

  override async list(filter?: SessionKeyFilter, options?: ListOptions): Promise<SessionPage> {
    await this.#check(createKeyFilter(filter), "list");
    return this.inner.list(filter, options);
  }

  override async clear(key: SessionKey): Promise<void> {
    await this.#check(createSessionKey(key), "delete");
    return this.inner.clear(key);
  }

  override async trim(key: SessionKey, options: { oldest: number }): Promise<number> {
    await this.#check(createSessionKey(key), "delete");
    return super.trim(key, options);
  }

  override async replaceTail(key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions): Promise<void> {
    await this.#check(createSessionKey(key), "delete");
    return super.replaceTail(key, tail, options);
  }

  override async delete(filter: SessionKeyFilter): Promise<number> {
    await this.#check(createKeyFilter(filter), "delete");
    return this.inner.delete(filter);
  }
}

/** Wraps any store with an `authorize` hook checked before every call. */
export function guardStore(inner: HistoryStore, authorize: Authorize): GuardedStore {
  return new GuardedStore(inner, authorize);
}

// Outside the class: a class body that names its own class is bundled as `class _GuardedStore`.
function guardedAs(inner: HistoryStore, authorize: Authorize, config: RunnableConfig): GuardedStore {
  return new GuardedStore(inner, authorize, config);
}
