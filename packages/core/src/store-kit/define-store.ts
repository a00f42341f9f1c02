import type { BaseMessage } from "@langchain/core/messages";
import { LockLostError, MemoriaError, StoreUnavailableError } from "../errors.js";
import {
  type FencedWriteOptions,
  type HistoryStore,
  type AppendOptions,
  type AppendResult,
  type LockOptions,
  type ReadOptions,
  StoreClosedError,
  type TurnLock,
  namedValues,
  pruneBatch,
  readWindow,
  refuseSealed,
  requireFilterField,
  stateName,
  stateValue,
  trimCount,
  turnIdOf,
} from "../history-store.js";
import type { JsonValue } from "../json-value.js";
import { LocalLeases } from "../local-leases.js";
import { type HeldLease, lockTimes, pollForLock } from "../lock-polling.js";
import { type OpenTurn, type TurnOptions, turnWith } from "../open-turn.js";
import { encodePayloads } from "../message-codec.js";
import { decodeMessages } from "../message-decoding.js";
import { type TailReplacement, changedUnderEdit, checkTail } from "../message-edits.js";
import { checkInfoPatch, type InfoPatch } from "../session-info.js";
import { type SessionKey, type SessionKeyFilter, createKeyFilter, createSessionKey, encodeSessionKey, sessionKeyId } from "../session-key.js";
import { stateEntries } from "../state-writes.js";
import { StoreChatMessageHistory } from "../store-chat-history.js";
import { infoOf, listSessions, recentSessions, sessionsMatching } from "./engine-pages.js";
import { type EngineSession, LOCK_LOST, type LockLost, type StoreEngine, type TextReads, type TurnWrite } from "./store-engine.js";

/**
 * A whole `HistoryStore` from an engine that moves strings: keys and arguments
 * checked, messages encoded and decoded, scope records kept out of `list` and
 * `recent`, fences and turn locks, `history()`, closed-store checks, and every
 * failure a typed error, once for every store built on it.
 */
export function defineStore(engine: StoreEngine): HistoryStore {
  const { name } = engine;
  // Without its own lock, the engine's sessions are locked in this process, and the kit checks fences.
  const leases = engine.lock ? undefined : new LocalLeases();
  // The engine's read, decoded here unless the engine keeps decoded messages itself.
  const readMessages: (session: EngineSession, last: number | undefined) => Promise<BaseMessage[]> = engine.readMessages
    ? engine.readMessages.bind(engine)
    : async (session, last) => decodeMessages(await (engine as TextReads).read(session, last));
  let closed = false;

  function open(): void {
    if (closed) throw new StoreClosedError(name);
  }

  /** The session a write names: the key checked and frozen, and its id. */
  function writing(key: SessionKey, options: FencedWriteOptions | undefined): EngineSession {
    open();
    const checked = createSessionKey(key);
    const session = { key: checked, id: encodeSessionKey(checked) };
    leases?.check(session.id, checked, options);
    return session;
  }

  /** The session a read names: checked as strictly, without building the frozen key. */
  function reading(key: SessionKey): EngineSession {
    open();
    return { key, id: sessionKeyId(key) };
  }

  /** The fence an engine checks: none where the kit's own leases checked it already. */
  const fenceOf = (options: FencedWriteOptions | undefined) => (leases ? undefined : options?.lock?.token);

  /**
   * The engine's answer, or its failure as a typed error: a memoria error as it is,
   * anything else as the store being unavailable. Called, not awaited, here, so an
   * engine call that throws before it returns a promise is typed too.
   */
  async function ask<T>(work: () => Promise<T>, write: boolean): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (MemoriaError.isInstance(error)) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new StoreUnavailableError(`The ${name} store failed: ${reason}.`, { cause: error, outcome: write ? "unknown" : "not-stored" });
    }
  }

  function fenced<T>(session: EngineSession, result: T | LockLost): T {
    if (result === LOCK_LOST) throw new LockLostError(session.key);
    return result;
  }

  /** The one append path, for `append` and a turn's save: the engine stores `payloads` as `write` says (nothing to store is a stored turn). */
  async function appendPayloads(session: EngineSession, payloads: readonly string[], write: TurnWrite): Promise<{ appended: boolean; released?: boolean }> {
    if (payloads.length === 0) return { appended: true };
    return fenced(session, await ask(() => engine.append(session, payloads, write), true));
  }

  /**
   * Takes the session's turn lock: the kit's own lease, or the engine's lock polled;
   * with `read`, a try that reads the session's payloads in the same step where the
   * engine has one (`payloads` undefined: nothing was read with it).
   */
  async function take(
    session: EngineSession,
    options: LockOptions,
    read: { last: number | undefined } | undefined,
  ): Promise<{ lease: HeldLease; payloads?: readonly string[] }> {
    if (leases) return { lease: await leases.lock(session.id, session.key, options) };
    const owner = crypto.randomUUID();
    const { ttlMs } = lockTimes(options);
    const calls = (engine.lock as NonNullable<StoreEngine["lock"]>)(session, owner, ttlMs);
    const renew = calls.renew?.bind(calls);
    const takeAndRead = read && calls.takeAndRead?.bind(calls);
    let payloads: readonly string[] | undefined;
    const tryTake = takeAndRead
      ? async () => {
          payloads = await ask(() => takeAndRead(read.last), true);
          return payloads !== undefined;
        }
      : () => ask(() => calls.take(), true);
    const lease = await pollForLock(session.key, options, {
      owner,
      take: tryTake,
      release: () => ask(() => calls.release(), true),
      renew: renew && (() => ask(renew, true)),
    });
    return { lease, payloads };
  }

  const { setStates, trim, prune, ready, recallIndex } = engine;
  const store: HistoryStore = {
    name,
    capabilities: { ...engine.capabilities, trim: trim !== undefined, prune: prune !== undefined },

    async read(key: SessionKey, options?: ReadOptions): Promise<BaseMessage[]> {
      const session = reading(key);
      const last = readWindow(options);
      if (last === 0) return [];
      return refuseSealed(key, await ask(() => readMessages(session, last), false), options);
    },

    async append(key: SessionKey, messages: readonly BaseMessage[], options?: AppendOptions): Promise<AppendResult> {
      const turnId = turnIdOf(options);
      const payloads = encodePayloads(messages);
      const session = writing(key, options);
      const { appended } = await appendPayloads(session, payloads, { turnId, keepTurnId: true, fence: fenceOf(options), release: false });
      return { appended };
    },

    async count(key: SessionKey): Promise<number> {
      const session = reading(key);
      return ask(() => engine.count(session), false);
    },

    async clear(key: SessionKey): Promise<void> {
      const session = writing(key, undefined);
      await ask(() => engine.clear(session), true);
      leases?.drop(session.id);
    },

    async getState(key: SessionKey, stateKey: string): Promise<JsonValue | undefined> {
      const checkedName = stateName(stateKey);
      const session = reading(key);
      const text = await ask(() => engine.getState(session, checkedName), false);
      return text === undefined ? undefined : parseStored(text);
    },

    async setState(key: SessionKey, stateKey: string, value: JsonValue, options?: FencedWriteOptions): Promise<void> {
      const checkedName = stateName(stateKey);
      const text = JSON.stringify(stateValue(value));
      const session = writing(key, options);
      fenced(session, await ask(() => engine.setState(session, checkedName, text, fenceOf(options)), true));
    },

    async list(filter?: SessionKeyFilter, options?) {
      open();
      const match = createKeyFilter(filter);
      return ask(() => listSessions(engine, match, options), false);
    },

    async delete(filter: SessionKeyFilter): Promise<number> {
      open();
      const match = createKeyFilter(filter);
      requireFilterField(match);
      // Local locks of erased sessions go with them: a fenced write after erasure finds its lock gone.
      const erase = engine.delete?.bind(engine);
      if (erase && !leases) return ask(() => erase(match), true);
      return clearEach(match);
    },

    async info(key: SessionKey) {
      const session = reading(key);
      const found = await ask(() => engine.info(session), false);
      return found && infoOf(found);
    },

    async setInfo(key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
      const checked = checkInfoPatch(patch);
      const session = writing(key, options);
      fenced(session, await ask(() => engine.setInfo(session, checked, fenceOf(options)), true));
    },

    async recent(filter?: SessionKeyFilter, options?) {
      open();
      const match = createKeyFilter(filter);
      return ask(() => recentSessions(engine, match, options), false);
    },

    async replaceTail(key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions): Promise<void> {
      checkTail(tail);
      const payloads = encodePayloads(tail.messages);
      const session = writing(key, options);
      const found = fenced(session, await ask(() => engine.replaceTail(session, { from: tail.from, count: tail.count, payloads }, fenceOf(options)), true));
      if (found !== tail.count) throw changedUnderEdit(found, tail.count);
    },

    async lock(key: SessionKey, options: LockOptions = {}): Promise<TurnLock> {
      return (await take(writing(key, undefined), options, undefined)).lease;
    },

    async openTurn(key: SessionKey, options: TurnOptions = {}): Promise<OpenTurn> {
      const session = writing(key, undefined); // the turn's key, checked once for all its calls
      const { read, ...lockOptions } = options;
      const last = read ? readWindow(read) : undefined;
      const wanted = read && last !== 0 ? { last } : undefined;
      const { lease, payloads } = await take(session, lockOptions, wanted);
      let history: BaseMessage[] | undefined = read && last === 0 ? [] : undefined;
      if (wanted) {
        try {
          const messages = payloads ? decodeMessages(payloads) : await ask(() => readMessages(session, last), false);
          history = refuseSealed(session.key, messages, read);
        } catch (error) {
          await lease.release();
          throw error;
        }
      }
      return turnWith(lease, history, async (messages, save) => {
        const turnId = turnIdOf(save);
        const payloads = encodePayloads(messages);
        open();
        const fenceWith = { lock: lease };
        leases?.check(session.id, session.key, fenceWith);
        const fence = fenceOf(fenceWith);
        const release = save?.last === true && fence !== undefined;
        const result = await appendPayloads(session, payloads, { turnId, keepTurnId: save?.keepTurnId !== false, fence, release });
        if (release && result.released) lease.markReleased();
        return { appended: result.appended };
      });
    },

    async getAllState(key: SessionKey): Promise<Record<string, JsonValue>> {
      const session = reading(key);
      const pairs = [...(await ask(() => engine.getAllState(session), false))].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return namedValues(pairs.map(([stateKey, text]) => [stateKey, parseStored(text)]));
    },

    async setStates(key: SessionKey, values: Readonly<Record<string, JsonValue>>, options?: FencedWriteOptions): Promise<void> {
      const entries = stateEntries(values).map(([stateKey, value]) => [stateKey, JSON.stringify(value)] as const);
      const session = writing(key, options);
      if (entries.length === 0) return; // nothing to write: no session made for it
      const fence = fenceOf(options);
      if (setStates) {
        fenced(session, await ask(() => setStates.call(engine, session, entries, fence), true));
        return;
      }
      // One value at a time, in order, where the engine cannot write several in one step.
      for (const [stateKey, text] of entries) fenced(session, await ask(() => engine.setState(session, stateKey, text, fence), true));
    },

    async trim(key: SessionKey, options: { oldest: number }): Promise<number> {
      const oldest = trimCount(options);
      const session = writing(key, undefined);
      if (!trim) throw new MemoriaError("UNSUPPORTED", `The ${name} store cannot trim sessions (its capabilities.trim is false).`);
      return oldest === 0 ? 0 : ask(() => trim.call(engine, session, oldest), true);
    },

    async prune(options?: { batchSize?: number }): Promise<number> {
      const batchSize = pruneBatch(options);
      open();
      return prune ? ask(() => prune.call(engine, batchSize), true) : 0;
    },

    async ready(): Promise<void> {
      open();
      if (ready) await ask(() => ready.call(engine), false);
    },

    recallIndex() {
      return recallIndex?.call(engine);
    },

    history(key: SessionKey) {
      return new StoreChatMessageHistory(store, createSessionKey(key));
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      leases?.clear();
      await engine.close();
    },
  };

  /** Erasure session by session: where the engine has no `delete`, or the kit holds its locks. */
  async function clearEach(match: SessionKeyFilter): Promise<number> {
    const doomed: EngineSession[] = [];
    for await (const session of sessionsMatching(engine, match)) doomed.push(session);
    for (const session of doomed) {
      await ask(() => engine.clear(session), true);
      leases?.drop(session.id);
    }
    return doomed.length;
  }

  return store;
}

function parseStored(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new MemoriaError("CORRUPT_DATA", "A stored state value is not JSON.");
  }
}
