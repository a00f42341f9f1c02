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
  LockLostError,
  type LockOptions,
  type OpenTurn,
  MemoriaError,
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
  createKeyFilter,
  createSessionKey,
  encodeSessionKey,
  everySession,
} from "@memoria/core";
import { SessionLocks, requireFilterField, stateName, stateValue, stateEntries } from "@memoria/core/store-kit";
import { DATA_KEY_STATE, type DataKey, DataKeys } from "./data-keys.js";
import { allSealedState, sealedState, setSealedStates } from "./encrypted-state.js";
import type { EncryptionOptions } from "./encryption-options.js";
import { type SealingContext, recentSealed, sealedInfo, setSealedInfo } from "./encrypted-info.js";
import { KeyHasher } from "./hashed-ids.js";
import { OpenedRecords } from "./opened-records.js";
import { KeyRing } from "./key-ring.js";
import { ScopeKeys } from "./scope-keys.js";
import { SealedRecallIndex } from "./sealed-recall-index.js";
import { type RekeyOptions, type RekeyReport, rekeySessions } from "./rekey.js";
import { appendSealed, lockSealed, openSealedTurn, readSealed, replaceSealedTail, trimSealed } from "./sealed-history.js";
import { openRawKey, sealRawKey } from "./sealed-records.js";

export type { EncryptionOptions } from "./encryption-options.js";

/** What an erasure did. */
export interface ErasureReceipt {
  /** The filter erased, as given. */
  filter: SessionKeyFilter;
  /** Sessions (conversations and scope records) deleted from the store. */
  deleted: number;
  /** The scope whose key was destroyed in the key vault (e.g. `{ userId: "ada" }`); absent when none was. */
  shredded?: SessionKeyFilter;
  /**
   * Of the sessions deleted, those the scope's key did not cover: written before
   * `scopeKeys` was on, their data key is sealed under a master key, so a copy of
   * them taken before the erasure (a backup, a replica, the engine's own files) still
   * opens with that master key. Absent when there were none. To make such copies
   * unreadable, retire the master key: make a new one active, `rekey()`, then remove
   * the old one from every key ring. To never have any, `rekey()` once after turning
   * `scopeKeys` on: it moves every data key under its scope's key.
   */
  notShredded?: number;
  /** When the erasure finished. */
  at: Date;
}

/**
 * A store whose messages and state are sealed with AES-256-GCM before they reach
 * `inner`: see {@link encryptStore}.
 */
export class EncryptedStore implements HistoryStore {
  readonly name: string;
  readonly capabilities: HistoryStore["capabilities"];
  readonly #ring: KeyRing;
  readonly #keys: DataKeys;
  readonly #hasher?: KeyHasher;
  readonly #queue = new SessionLocks();
  readonly #opened: OpenedRecords;
  readonly #info: SealingContext;
  #recall?: SealedRecallIndex;

  constructor(
    readonly inner: HistoryStore,
    options: EncryptionOptions,
  ) {
    if (typeof options !== "object" || options === null) throw new MemoriaError("INVALID_ARGUMENT", "encryptStore needs options: { keys, activeKeyId }.");
    this.name = inner.name;
    this.capabilities = inner.capabilities;
    this.#ring = new KeyRing(options.keys, options.activeKeyId);
    const cacheSize = options.cacheSize ?? 10_000;
    if (!Number.isSafeInteger(cacheSize) || cacheSize < 1)
      throw new MemoriaError("INVALID_ARGUMENT", `cacheSize must be a whole number >= 1, got ${cacheSize}.`);
    const hasher = options.hashIds ? new KeyHasher(options.hashIds.secret) : undefined;
    this.#hasher = hasher;
    // With hashed ids, each data key record also holds the raw key, sealed, for list().
    const rawKey = hasher && ((key: SessionKey, dataKey: DataKey) => sealRawKey(dataKey, encodeSessionKey(hasher.key(key)), key));
    const scopes = options.scopeKeys && new ScopeKeys(options.scopeKeys, this.#ring, cacheSize);
    this.#keys = new DataKeys(inner, this.#ring, cacheSize, rawKey, scopes);
    // Title and metadata are sealed as one value: see encrypted-info.ts.
    this.#info = {
      inner,
      keys: this.#keys,
      stored: (key) => this.#stored(key),
      rawKey: (stored) => (this.#hasher ? this.#rawKey(stored) : Promise.resolve(stored)),
      underLock: (id, stored, lock, write) => this.#underLock(id, stored, lock, write),
      anchor: options.anchor,
    };
    const plaintextCache = options.plaintextCache ?? 4_000_000;
    if (!Number.isSafeInteger(plaintextCache) || plaintextCache < 0)
      throw new MemoriaError("INVALID_ARGUMENT", `plaintextCache must be a whole number >= 0, got ${plaintextCache}.`);
    if (options.frozen !== undefined && typeof options.frozen !== "boolean")
      throw new MemoriaError("INVALID_ARGUMENT", `frozen must be true or false, got ${String(options.frozen)}.`);
    this.#opened = new OpenedRecords(plaintextCache, options.frozen ?? true);
  }

  #stored(key: SessionKey): { key: SessionKey; stored: SessionKey; id: string } {
    const checked = createSessionKey(key);
    const stored = this.#hasher ? this.#hasher.key(checked) : checked;
    return { key: checked, stored, id: encodeSessionKey(stored) };
  }

  #filter(filter: SessionKeyFilter | undefined): SessionKeyFilter {
    const checked = createKeyFilter(filter);
    return this.#hasher ? this.#hasher.filter(checked) : checked;
  }

  read(key: SessionKey, options?: ReadOptions): Promise<BaseMessage[]> {
    return readSealed(this.#info, this.#opened, key, options);
  }

  append(key: SessionKey, messages: readonly BaseMessage[], options?: AppendOptions): Promise<AppendResult> {
    return appendSealed(this.#info, this.#opened, key, messages, options);
  }

  /**
   * Runs a write under `lock`, or, without one, under the session's turn lock taken
   * here: positions and a new data key must come from one writer at a time.
   */
  async #underLock<T>(id: string, stored: SessionKey, lock: TurnLock | undefined, write: (lock: TurnLock) => Promise<T>): Promise<T> {
    if (lock) return write(lock);
    const release = await this.#queue.acquire(id);
    try {
      for (let attempt = 1; ; attempt++) {
        const held = this.#keys.stampLock(await this.inner.lock(stored));
        try {
          return await write(held);
        } catch (error) {
          // The caller asked for an unfenced write: a session erased under the lock taken
          // here is written afresh, as an unfenced write after the erasure would be.
          if (!LockLostError.isInstance(error) || attempt >= 5) throw error;
          this.#keys.forget(id);
        } finally {
          await held.release();
        }
      }
    } finally {
      release();
    }
  }

  getState(key: SessionKey, name: string): Promise<JsonValue | undefined> {
    return sealedState(this.#info, key, name);
  }

  /** Every state value the app set, opened; memoria's own records (the data key) stay inside. */
  getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
    return allSealedState(this.#info, key);
  }

  async setState(key: SessionKey, name: string, value: JsonValue, options?: FencedWriteOptions): Promise<void> {
    return setSealedStates(this.#info, key, [[stateName(name), stateValue(value)]], options);
  }

  async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void> {
    return setSealedStates(this.#info, key, stateEntries(values), options);
  }

  async clear(key: SessionKey): Promise<void> {
    const s = this.#stored(key);
    const forget = () => {
      this.#keys.forget(s.id);
      this.#opened.forget(s.id);
    };
    forget();
    await this.inner.clear(s.stored);
    forget(); // again: a read that raced the erasure may have cached what it erased
  }

  async count(key: SessionKey): Promise<number> {
    return this.inner.count(this.#stored(key).stored);
  }

  async info(key: SessionKey): Promise<SessionInfo | undefined> {
    return sealedInfo(this.#info, key);
  }

  async setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
    return setSealedInfo(this.#info, key, patch, options);
  }

  async recent(filter?: SessionKeyFilter, options?: ListOptions): Promise<InfoPage> {
    return recentSealed(this.#info, this.#filter(filter), options);
  }

  async list(filter?: SessionKeyFilter, options?: ListOptions): Promise<SessionPage> {
    const page = await this.inner.list(this.#filter(filter), options);
    if (!this.#hasher) return page;
    const sessions = await Promise.all(page.sessions.map((stored) => this.#rawKey(stored)));
    return { ...page, sessions };
  }

  /** The raw key a hashed session was written under, opened from its data key record. */
  async #rawKey(stored: SessionKey): Promise<SessionKey> {
    const record = await this.#keys.record(stored, stored);
    if (!record?.key) return stored; // state-less: nothing sealed to name it by
    const dataKey = await this.#keys.unwrap(stored, stored, record);
    const raw = openRawKey(dataKey.key, encodeSessionKey(stored), record.key);
    return raw ? createSessionKey(raw) : stored;
  }

  /** Deletes the sessions matching `filter`; with per-scope keys and a filter of just that field, shreds the scope's key too: see {@link erase}. */
  async delete(filter: SessionKeyFilter): Promise<number> {
    return (await this.erase(filter)).deleted;
  }

  /**
   * `delete`, with a receipt. Where the store has per-scope keys (`scopeKeys`) and
   * `filter` names just that field (`{ userId }`), the scope's key is destroyed in
   * the vault first, then its sessions are deleted: every copy of them the engine
   * still keeps (logs, snapshots, free pages, backups) is unreadable from then on,
   * even if the deletion itself fails (run it again to remove the rows).
   */
  async erase(filter: SessionKeyFilter): Promise<ErasureReceipt> {
    const checked = createKeyFilter(filter);
    requireFilterField(checked);
    const stored = this.#filter(checked);
    const scopes = this.#keys.scopes;
    const scope = scopes && Object.keys(checked).length === 1 ? scopes.nameOf(stored) : undefined;
    const forget = () => {
      this.#keys.forgetAll();
      this.#opened.forgetAll();
    };
    forget();
    const notShredded = scope === undefined ? 0 : await this.#underMasterKeys(stored, scopes!.field);
    const shredded = scope !== undefined && (await scopes!.destroy(scope));
    const deleted = await this.inner.delete(stored);
    forget(); // again: a read that raced the erasure may have cached what it erased
    return {
      filter: checked,
      deleted,
      ...(shredded ? { shredded: checked } : {}),
      ...(notShredded > 0 ? { notShredded } : {}),
      at: new Date(),
    };
  }

  /** How many sessions (and scope records) matching `stored` have their data key under a master key, not their scope's. */
  async #underMasterKeys(stored: SessionKeyFilter, field: string): Promise<number> {
    let count = 0;
    for await (const key of everySession(this.inner, stored, { scopes: [[field]] })) {
      // Read raw: a malformed record must not stop an erasure.
      const record = await this.inner.getState(key, DATA_KEY_STATE);
      if (typeof record === "object" && record !== null && !Array.isArray(record) && record.s === undefined) count += 1;
    }
    return count;
  }

  /** An edit, sealed so that the records it replaced cannot be written back unnoticed: see sealed-history.ts. */
  async replaceTail(key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions): Promise<void> {
    return replaceSealedTail(this.#info, this.#opened, key, tail, options);
  }

  /** Rejects with `UNSUPPORTED`, as the inner store does, where the inner store cannot trim. */
  async trim(key: SessionKey, options: { oldest: number }): Promise<number> {
    return trimSealed(this.#info, key, options);
  }

  lock(key: SessionKey, options?: LockOptions): Promise<TurnLock> {
    return lockSealed(this.#info, key, options);
  }

  openTurn(key: SessionKey, options?: TurnOptions): Promise<OpenTurn> {
    return openSealedTurn(this.#info, this.#opened, key, options);
  }

  /**
   * The recall index for this store's long-term memory (recallMemory's default
   * here): vectors sealed in the scope records, so they are encrypted, erased and
   * rekeyed with the user's memory, and survive a restart. The inner store's own
   * index (sqlite-vec) is not used: it would hold the vectors in the clear.
   */
  recallIndex(): RecallIndex {
    this.#recall ??= new SealedRecallIndex(this.#info);
    return this.#recall;
  }

  history(key: SessionKey): BaseListChatMessageHistory {
    return new StoreChatMessageHistory(this, createSessionKey(key));
  }

  /** The inner store's: expired sessions go whole, sealed records, data keys and all. */
  async prune(options?: { batchSize?: number }): Promise<number> {
    return this.inner.prune(options);
  }

  async ready(): Promise<void> {
    return this.inner.ready();
  }

  /**
   * Rewraps every data key that is not under the active master key (sessions' and
   * scope records', so long-term memory too), one session at a time under its turn
   * lock. Safe to stop and run again: sessions done are skipped. Once a run
   * completes, older master keys can be dropped.
   */
  async rekey(options: RekeyOptions = {}): Promise<RekeyReport> {
    // Listed as the inner store keeps them (hashed, where ids are), scope records too.
    const stored = { list: (filter?: SessionKeyFilter, page?: ListOptions) => this.inner.list(this.#filter(filter), page) };
    const sessions = everySession(stored, createKeyFilter(options.filter), { pageSize: options.pageSize, scopes: options.scopes });
    return rekeySessions({ inner: this.inner, keys: this.#keys }, sessions, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * Wraps any store so that what it keeps is sealed with AES-256-GCM (envelope
 * encryption: a random data key per session, itself sealed under the app's master
 * key). Messages keep only their count and order in the clear; state values and,
 * with `hashIds`, session-key values are sealed or hashed too. A record changed,
 * moved to another session or position, or opened with a wrong key is an
 * `IntegrityError`, never garbage.
 */
export function encryptStore(inner: HistoryStore, options: EncryptionOptions): EncryptedStore {
  return new EncryptedStore(inner, options);
}
