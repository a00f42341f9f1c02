import { type KeyObject, createSecretKey, randomBytes } from "node:crypto";
import { type HistoryStore, IntegrityError, type JsonValue, type SessionKey, type TurnLock, encodeSessionKey } from "@memoria/core";
import type { KeyRing } from "./key-ring.js";
import type { ScopeKeys } from "./scope-keys.js";
import { type Head, type HistoryMarks, isAhead } from "./record-chain.js";
import { open, randomId, seal } from "./seal.js";

/** The state value that holds a session's data key, sealed under a master key. */
export const DATA_KEY_STATE = "memoria.datakey";

/**
 * A session's data key as stored: its id, the key that wraps it (a master key, or
 * with `s` the scope key of the session's `s` field), the wrapped key, (hashed ids)
 * the sealed raw session key, and its history marks, sealed.
 */
export interface DataKeyRecord {
  v: 1;
  id: string;
  k: string;
  w: string;
  s?: string;
  key?: string;
  m?: string;
}

export interface DataKey {
  id: string;
  key: KeyObject;
  marks?: HistoryMarks;
}

/** The newest record of a session, for the next write: -1 and "" when there is none. */
export interface Tail {
  position: number;
  edit: number;
  link: string;
}

interface Entry {
  dataKey?: DataKey;
  /** Clock reading before the read or fetch that last saw `dataKey` as the session's own. */
  keySeenAt: number;
  /** The session's newest record, as last seen; undefined when not known. */
  tail?: Tail;
  tailSeenAt: number;
  /** The furthest head a finished read or write found, and the clock reading when it was found. */
  head?: Head;
  headAt: number;
}

const wrapAad = (storedKey: string, id: string) => `memoria.datakey|${storedKey}|${id}`;
const marksAad = (storedKey: string, id: string) => `memoria.marks|${storedKey}|${id}`;

function isRecord(value: JsonValue | undefined): value is DataKeyRecord & { [k: string]: JsonValue } {
  const v = value as Record<string, unknown> | undefined;
  return (
    typeof v === "object" &&
    v !== null &&
    v.v === 1 &&
    typeof v.id === "string" &&
    typeof v.k === "string" &&
    typeof v.w === "string" &&
    (v.s === undefined || typeof v.s === "string")
  );
}

/**
 * Each session's data key (envelope encryption): records are sealed with a random
 * 256-bit key of their session, and that key is stored in the session's state,
 * sealed under the app's active master key. Rotating master keys rewraps these
 * keys only. Keys are cached per session; a cached key or tail position is trusted
 * for a write only when it was seen after the write's lock was taken, so a session
 * erased and started again elsewhere is never written with a stale key.
 */
export class DataKeys {
  readonly #entries = new Map<string, Entry>();
  readonly #lockTakenAt = new WeakMap<TurnLock, number>();
  #clock = 0;

  constructor(
    private readonly inner: HistoryStore,
    private readonly ring: KeyRing,
    private readonly cacheSize: number,
    /** The raw session key sealed for a new data key record (hashed ids), if any. */
    private readonly sealRawKey?: (key: SessionKey, dataKey: DataKey) => string,
    /** Per-scope keys (crypto-shredding), if any. */
    readonly scopes?: ScopeKeys,
  ) {}

  /** A reading of the clock, taken before a read whose findings are then recorded with it. */
  tick(): number {
    return ++this.#clock;
  }

  /** Remembers when a lock was taken: what is seen after it holds until it is released. */
  stampLock(lock: TurnLock): TurnLock {
    this.#lockTakenAt.set(lock, this.tick());
    return lock;
  }

  forget(storedKey: string): void {
    this.#entries.delete(storedKey);
  }

  forgetAll(): void {
    this.#entries.clear();
  }

  #entry(id: string): Entry {
    let entry = this.#entries.get(id);
    if (entry) {
      this.#entries.delete(id); // most recently used last
    } else {
      entry = { keySeenAt: 0, tailSeenAt: 0, headAt: 0 };
      if (this.#entries.size >= this.cacheSize) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    this.#entries.set(id, entry);
    return entry;
  }

  /** Records what a read found: the key its records were sealed with, and its newest record. */
  saw(storedKey: string, at: number, dataKeyId: string | undefined, tail: Tail): void {
    const entry = this.#entry(storedKey);
    if (dataKeyId !== undefined && entry.dataKey?.id === dataKeyId) entry.keySeenAt = Math.max(entry.keySeenAt, at);
    if (at > entry.tailSeenAt) {
      entry.tail = tail;
      entry.tailSeenAt = at;
    }
  }

  /** After a stored append: the session's newest record moved on, as seen when the tail was. */
  appended(storedKey: string, tail: Tail | undefined): void {
    const entry = this.#entries.get(storedKey);
    if (entry) entry.tail = tail;
  }

  /** The furthest head found by reads and writes that finished before clock reading `at`. */
  headBefore(storedKey: string, at: number): Head | undefined {
    const entry = this.#entries.get(storedKey);
    return entry && entry.headAt < at ? entry.head : undefined;
  }

  /** Records a head a finished read or write found; a head behind the one kept (a read that raced a write) changes nothing. */
  reached(storedKey: string, head: Head): void {
    const entry = this.#entry(storedKey);
    if (entry.head && entry.head.dataKeyId === head.dataKeyId && !isAhead(head, entry.head)) return;
    entry.head = head;
    entry.headAt = this.tick();
  }

  /** The history marks of the data key cached for a session, if it is the one named. */
  marksOf(storedKey: string, dataKeyId: string): HistoryMarks | undefined {
    const dataKey = this.#entries.get(storedKey)?.dataKey;
    return dataKey?.id === dataKeyId ? dataKey.marks : undefined;
  }

  /** The data key a record names, for reading it: from the cache, else the session's state. */
  async forRead(key: SessionKey, storedKey: SessionKey, dataKeyId: string): Promise<KeyObject> {
    const id = encodeSessionKey(storedKey);
    const cached = this.#entries.get(id)?.dataKey;
    if (cached?.id === dataKeyId) return cached.key;
    const at = this.tick();
    const fetched = await this.fetch(key, storedKey);
    if (!fetched) throw new IntegrityError(key, "tampered", "the session holds sealed records but no data key");
    this.#remember(id, fetched, at);
    if (fetched.id !== dataKeyId) throw new IntegrityError(key, "misplaced", "a record is sealed under another session's data key");
    return fetched.key;
  }

  /**
   * The session's data key for a write under `lock`, made (and stored under the
   * lock) if the session has none; given `newest`, also where the write starts (its
   * position, edit count and link), asking `newest` if the tail was not seen since
   * the lock was taken.
   */
  async forWrite(key: SessionKey, storedKey: SessionKey, lock: TurnLock | undefined, newest?: () => Promise<Tail>) {
    const id = encodeSessionKey(storedKey);
    const since = lock ? this.#lockTakenAt.get(lock) : undefined;
    let entry = this.#entries.get(id);
    if (!(entry?.dataKey && since !== undefined && entry.keySeenAt > since)) {
      const at = this.tick();
      const fetched = await this.fetch(key, storedKey);
      // Writers hold the session's lock (the store wrapper takes one where the store has
      // locks), so no other writer can be making a data key for it meanwhile.
      this.#remember(id, fetched ?? (await this.#create(key, storedKey, lock)), at);
      entry = this.#entries.get(id) as Entry;
    }
    const dataKey = entry.dataKey as DataKey;
    if (!newest) return { dataKey, start: { start: 0, edit: 0, link: "" } };
    if (entry.tail === undefined || since === undefined || entry.tailSeenAt <= since) {
      const at = this.tick();
      const tail = await newest();
      this.saw(id, at, undefined, tail);
    }
    const tail = this.#entries.get(id)?.tail ?? { position: -1, edit: 0, link: "" };
    const { edit, floor } = dataKey.marks ?? {};
    // Positions go on from the newest record, or from where a trim that emptied the session left them.
    const start = tail.position >= 0 ? tail.position + 1 : (floor?.next ?? 0);
    return { dataKey, start: { start, edit: Math.max(tail.edit, edit?.count ?? 0, floor?.edit ?? 0), link: tail.link } };
  }

  /** Changes the history marks sealed in a session's data key record, under the caller's lock. */
  async mark(key: SessionKey, storedKey: SessionKey, lock: TurnLock | undefined, change: (marks: HistoryMarks) => HistoryMarks): Promise<void> {
    const record = await this.record(key, storedKey);
    if (!record) return; // nothing sealed yet: nothing to mark
    const dataKey = await this.unwrap(key, storedKey, record);
    const marks = change(dataKey.marks ?? {});
    const m = seal(dataKey.key, Buffer.from(JSON.stringify(marks)), marksAad(encodeSessionKey(storedKey), record.id));
    await this.inner.setState(storedKey, DATA_KEY_STATE, { ...record, m } as unknown as JsonValue, lock && { lock });
    this.forget(encodeSessionKey(storedKey));
  }

  #remember(id: string, dataKey: DataKey, at: number): void {
    const entry = this.#entry(id);
    if (entry.dataKey?.id !== dataKey.id) {
      entry.dataKey = dataKey;
      entry.tail = undefined;
      entry.tailSeenAt = 0;
    }
    entry.keySeenAt = Math.max(entry.keySeenAt, at);
  }

  /** The session's stored data key record, checked, or undefined if it has none. */
  async record(key: SessionKey, storedKey: SessionKey): Promise<DataKeyRecord | undefined> {
    const value = await this.inner.getState(storedKey, DATA_KEY_STATE);
    if (value === undefined) return undefined;
    if (!isRecord(value)) throw new IntegrityError(key, "tampered", "the session's data key record is malformed");
    return value;
  }

  /** Reads and unwraps the session's data key. */
  async fetch(key: SessionKey, storedKey: SessionKey): Promise<DataKey | undefined> {
    const record = await this.record(key, storedKey);
    return record && (await this.unwrap(key, storedKey, record));
  }

  async unwrap(key: SessionKey, storedKey: SessionKey, record: DataKeyRecord): Promise<DataKey> {
    const { wrapping, named } = await this.#wrappingKey(key, storedKey, record);
    const bytes = open(wrapping, record.w, wrapAad(encodeSessionKey(storedKey), record.id));
    if (bytes?.length !== 32) {
      throw new IntegrityError(key, "tampered", `its data key does not open with ${named} (a wrong key, a changed record, or one moved from another session)`);
    }
    const dataKey: DataKey = { id: record.id, key: createSecretKey(bytes) };
    if (record.m !== undefined) {
      const marks = typeof record.m === "string" ? open(dataKey.key, record.m, marksAad(encodeSessionKey(storedKey), record.id)) : undefined;
      if (!marks) throw new IntegrityError(key, "tampered", "its history marks do not open (changed, or moved from another session)");
      dataKey.marks = JSON.parse(marks.toString("utf8")) as HistoryMarks;
    }
    return dataKey;
  }

  /** The key a record's data key is sealed under: a master key from the ring, or its scope's key from the vault. */
  async #wrappingKey(key: SessionKey, storedKey: SessionKey, record: DataKeyRecord): Promise<{ wrapping: KeyObject; named: string }> {
    if (record.s === undefined) {
      const master = await this.ring.get(record.k);
      if (!master) throw new IntegrityError(key, "unknown-key", `its data key is sealed under master key "${record.k}", which the key ring does not hold`);
      return { wrapping: master, named: `master key "${record.k}"` };
    }
    if (this.scopes?.field !== record.s) {
      throw new IntegrityError(
        key,
        "unknown-key",
        `its data key is sealed under a per-${record.s} key: open the store with scopeKeys: { field: "${record.s}", vault }`,
      );
    }
    const name = this.scopes.nameOf(storedKey);
    if (name === undefined)
      throw new IntegrityError(key, "misplaced", `its data key is sealed under a per-${record.s} key, but the session has no ${record.s}`);
    return { wrapping: await this.scopes.forUnwrap(key, name, record.k), named: `the key of ${name}` };
  }

  /** True when a record's data key is sealed where new ones are: its scope's key, else the active master key. */
  isWrappedAsNew(storedKey: SessionKey, record: DataKeyRecord): boolean {
    return this.scopes?.nameOf(storedKey) !== undefined ? record.s === this.scopes.field : record.s === undefined && record.k === this.ring.activeKeyId;
  }

  /** The record sealing `dataKey` under its scope's key where the session has one, else under the active master key. */
  async wrap(storedKey: SessionKey, dataKey: { id: string; bytes: Buffer }, extra: { key?: string; m?: string } = {}): Promise<DataKeyRecord> {
    const aad = wrapAad(encodeSessionKey(storedKey), dataKey.id);
    const name = this.scopes?.nameOf(storedKey);
    let record: DataKeyRecord;
    if (this.scopes && name !== undefined) {
      const scopeKey = await this.scopes.forWrap(storedKey, name);
      record = { v: 1, id: dataKey.id, k: scopeKey.id, s: this.scopes.field, w: seal(scopeKey.key, dataKey.bytes, aad) };
    } else {
      record = { v: 1, id: dataKey.id, k: this.ring.activeKeyId, w: seal(await this.ring.active(), dataKey.bytes, aad) };
    }
    if (extra.key !== undefined) record.key = extra.key;
    if (extra.m !== undefined) record.m = extra.m;
    return record;
  }

  async #create(key: SessionKey, storedKey: SessionKey, lock: TurnLock | undefined): Promise<DataKey> {
    const bytes = randomBytes(32);
    const dataKey = { id: randomId(), key: createSecretKey(bytes) };
    const record = await this.wrap(storedKey, { id: dataKey.id, bytes }, this.sealRawKey ? { key: this.sealRawKey(key, dataKey) } : {});
    await this.inner.setState(storedKey, DATA_KEY_STATE, record as unknown as JsonValue, lock && { lock });
    return dataKey;
  }
}
