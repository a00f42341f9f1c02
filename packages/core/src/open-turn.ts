import type { BaseMessage } from "@langchain/core/messages";
import { type AppendResult, type HistoryStore, type LockOptions, type ReadOptions, type TurnLock, readWindow } from "./history-store.js";
import type { SessionKey } from "./session-key.js";

export interface TurnOptions extends LockOptions {
  /**
   * The history the turn starts from, read under its lock: in the step that takes
   * the lock where the store can (Redis: one script, SQL: one transaction), so a
   * turn costs one round trip fewer. It is the turn's `history`: exactly what a
   * `read(key, read)` right after taking the lock would return.
   * @default nothing read
   */
  read?: ReadOptions;
}

export interface TurnSaveOptions {
  /** The turn's id: stored with its messages, so a retry of the turn stores nothing. @default a fresh random id */
  turnId?: string;
  /**
   * False when `turnId` was made up for this one call rather than given by the
   * application: it is only repeated to retry a write whose outcome was unknown, so
   * a store that never leaves an outcome unknown (the in-memory one) need not keep it.
   * @default true
   */
  keepTurnId?: boolean;
  /**
   * Nothing else is written under the turn's lock after this save: the store may
   * give the lock back in the same atomic step (a round trip saved at the end of a
   * turn), after which `release()` has nothing left to do.
   * @default false
   */
  last?: boolean;
}

/**
 * One turn of a session, open: its lock held, the history it asked for read under
 * that lock, and the save that ends it. What `RunnableWithMessageHistory` does with
 * a store between a call's start and its end goes through this object, so the
 * guarantees (the lock, the fence on every write, a turn stored once) and the
 * round trips a store saves (the read taken with the lock, the lock given back with
 * the save) live in one place.
 */
export interface OpenTurn {
  /** The turn's lock: pass it (`{ lock }`) to the turn's other writes (state, info) so they are fenced too. */
  readonly lock: TurnLock;
  /** What `TurnOptions.read` asked for, read under the lock; undefined when nothing was asked. */
  readonly history: BaseMessage[] | undefined;
  /**
   * Appends the turn's messages, all or none, fenced by the lock (`LockLostError`
   * once it is lost) and deduplicated by turn id (`appended: false` for a turn
   * stored before).
   */
  save(messages: readonly BaseMessage[], options?: TurnSaveOptions): Promise<AppendResult>;
  /**
   * Optional, where the store can make it in one copy (the in-memory store): the
   * turn's `history` followed by `after`, as one new array. The wrapper's default
   * turn (the whole history, untraced) sends it to the model as it is.
   */
  historyWith?(after: readonly BaseMessage[]): BaseMessage[];
  /** Gives the lock back, where a `last` save did not already. Safe to call twice; never rejects. */
  release(): Promise<void>;
}

/**
 * A turn made of a store's public calls: `lock`, then `read` under the lock, and a
 * save that is a fenced `append`. Correct for any store; what a store with no
 * quicker way (a read taken with its lock, a lock given back with its save) gives
 * as its `openTurn`, and what a wrapper whose calls are its own builds its turn of.
 */
export async function composedTurn(store: Pick<HistoryStore, "lock" | "read" | "append">, key: SessionKey, options: TurnOptions = {}): Promise<OpenTurn> {
  const { read, ...lockOptions } = options;
  if (read) readWindow(read); // a bad window is refused before the lock is taken
  const lock = await store.lock(key, lockOptions);
  let history: BaseMessage[] | undefined;
  if (read) {
    try {
      history = await store.read(key, read);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }
  return turnWith(lock, history, (messages, save) => store.append(key, messages, { lock, turnId: save?.turnId }));
}

/** An open turn of `lock` and the `history` read under it, whose save is `save` (fenced by that lock) and whose release is the lock's. */
export function turnWith(
  lock: TurnLock,
  history: BaseMessage[] | undefined,
  save: (messages: readonly BaseMessage[], options?: TurnSaveOptions) => Promise<AppendResult>,
): OpenTurn {
  return { lock, history, save, release: () => lock.release() };
}
