import { type HistoryStore, type JsonValue, type SessionKey, type TurnLock, encodeSessionKey } from "@memoria/core";
import { namedValues } from "@memoria/core/store-kit";

/** How many state values one saver remembers. */
const KEPT = 256;

/**
 * State values read and written under a thread's lock, remembered while that same
 * lock is held: nobody else writes the thread meanwhile, so the saver's next write
 * in the burst need not read back what it just wrote (the head, a checkpoint's
 * writes). Without a lock, or under a new one, it reads the store.
 */
export class LockedState {
  readonly #known = new Map<string, { lock: TurnLock; value: JsonValue | undefined }>();

  constructor(private readonly store: HistoryStore) {}

  async get(key: SessionKey, name: string, lock: TurnLock | undefined): Promise<JsonValue | undefined> {
    const id = `${encodeSessionKey(key)}\u0000${name}`;
    const known = this.#known.get(id);
    if (lock && known?.lock === lock && !lock.lost) return known.value;
    const value = await this.store.getState(key, name);
    this.#remember(id, lock, value);
    return value;
  }

  async set(key: SessionKey, name: string, value: JsonValue, lock: TurnLock | undefined): Promise<void> {
    return this.setAll(key, [[name, value]], lock);
  }

  /** Writes the values together: in one step where the store writes several so (`setStates`). */
  async setAll(key: SessionKey, entries: [string, JsonValue][], lock: TurnLock | undefined): Promise<void> {
    const session = encodeSessionKey(key);
    const ids = entries.map(([name]) => `${session}\u0000${name}`);
    // Forgotten first: if the write fails, what it left is unknown.
    for (const id of ids) this.#known.delete(id);
    await this.store.setStates(key, namedValues(entries), { lock });
    for (const [i, id] of ids.entries()) this.#remember(id, lock, entries[i]![1]);
  }

  forget(): void {
    this.#known.clear();
  }

  #remember(id: string, lock: TurnLock | undefined, value: JsonValue | undefined): void {
    this.#known.delete(id);
    if (!lock) return;
    this.#known.set(id, { lock, value });
    if (this.#known.size > KEPT) this.#known.delete(this.#known.keys().next().value as string);
  }
}
