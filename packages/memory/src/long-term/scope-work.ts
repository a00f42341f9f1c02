import type { BaseMessage } from "@langchain/core/messages";
import {
  type HistoryStore,
  MemoriaError,
  type SessionKey,
  type SessionKeyFilter,
  type TurnLock,
  decodeSessionKey,
  encodeSessionKey,
  scopeKeyOf,
} from "@memoria/core";
import { namedValues } from "@memoria/core/store-kit";
import { type ScopeRecord, readScopeRecord, withScopeLock, writeScopeRecord } from "./scope-record.js";
import { scopeOfSession } from "./session-scope.js";
import { BudgetSpentError } from "../memory-budget.js";

export type { ScopeRecord } from "./scope-record.js";

/** One batch of a session's new messages, handed to a job. */
export interface ScopeBatch<D> {
  store: HistoryStore;
  scope: SessionKeyFilter;
  /** The encoded key of the scope record (what an index files items under). */
  scopeId: string;
  session: SessionKey;
  sessionId: string;
  /** The messages, and the position of the first in its session. */
  messages: BaseMessage[];
  first: number;
  data: D | undefined;
  /** When this batch is processed (epoch ms). */
  now: number;
}

/** What a long-term memory does off the turn: turns a batch of new messages into its new data. */
export interface ScopeJob<D> {
  /** The state name of the scope record (one per memory kind). */
  readonly name: string;
  /** The model the work asks, by name, for failure reports. */
  readonly model?: string;
  /** The most messages handed over at once. */
  readonly batchSize: number;
  process(batch: ScopeBatch<D>): Promise<D>;
  /**
   * Whether the progress of a stored record still holds (recall: it was made in the
   * index this process finds, not in one the record was copied from); when false,
   * the scope's sessions are processed again from their start. Left out: it holds.
   */
  holds?(data: D, store: HistoryStore): Promise<boolean>;
}

/**
 * Where a background failure is reported: a failed batch is not marked done, so the next
 * turn, `resume` or restart tries it again. `model` names the model the work asked, where
 * it asks one.
 */
export type BackgroundErrorHandler = (error: unknown, context: { scope: SessionKeyFilter; session?: SessionKey; memory: string; model?: string }) => void;

/** Causes already reported by the default handler in this process. */
const reported = new Set<string>();

/**
 * The default `onError`: one line, once per cause (the memory, its model, the error's
 * kind), as a process warning with code `MEMORIA_BACKGROUND_WORK`: what failed, that it is
 * retried, and what to do. A model that keeps answering in a form the work cannot read
 * would otherwise print the same stack trace on every turn.
 */
export const reportOnce: BackgroundErrorHandler = (error, { memory, model }) => {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  const kind = error instanceof Error ? `${error.name}${code ? ` ${String(code)}` : ""}` : typeof error;
  // A spent budget is said once per period: it is a cause again when the next one is spent too.
  const spent = BudgetSpentError.isInstance(error) ? error : undefined;
  const cause = `${memory}|${model ?? ""}|${kind}${spent ? `|${spent.resetsAt}` : ""}`;
  if (reported.has(cause)) return;
  reported.add(cause);
  if (spent) {
    process.emitWarning(`memoria: the "${memory}" memory's work is not done: ${spent.message} This is said once per period.`, { code: "MEMORIA_BUDGET_SPENT" });
    return;
  }
  const said = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.slice(0, 200);
  process.emitWarning(
    `memoria: the work of the "${memory}" memory after a turn failed${model ? ` (model ${model})` : ""}: ${kind}: ${said}. It is retried with the next turn, and this is said once per cause: ` +
      "if the model cannot answer in the form asked (tool calls or JSON), give this memory one that can; pass onError to handle failures yourself.",
    { code: "MEMORIA_BACKGROUND_WORK" },
  );
};

/** How many caught-up scopes a process remembers. */
const CAUGHT_UP_LIMIT = 10_000;

interface ScopeQueue {
  /** The scope record's encoded key. */
  id: string;
  scope: SessionKeyFilter;
  /** Sessions with unprocessed messages, in the order they were noticed. */
  dirty: Set<string>;
  /** False until this process has compared every session of the scope with its cursor (after a restart). */
  caughtUp: boolean;
  running?: Promise<void>;
}

/**
 * Runs one memory kind's work after turns are saved: durable (progress lives in
 * the scope record, written in the same `setState` as the results, so a crash
 * repeats and loses nothing), ordered per scope (one pass at a time, under the
 * scope record's turn lock, so several processes never process a turn twice), and
 * observable (`idle()`; failures reach `onError`).
 */
export class ScopeWork<D> {
  readonly #queues = new Map<string, ScopeQueue>();
  /** Scopes this process has compared with their progress since it started, newest last (bounded: a forgotten one is compared again). */
  readonly #caughtUp = new Map<string, true>();
  readonly #store: HistoryStore;
  readonly #job: ScopeJob<D>;
  readonly #fields: readonly string[] | undefined;
  readonly #onError: BackgroundErrorHandler;

  constructor(store: HistoryStore, job: ScopeJob<D>, fields: readonly string[] | undefined, onError: BackgroundErrorHandler) {
    this.#store = store;
    this.#job = job;
    this.#fields = fields;
    this.#onError = onError;
  }

  /** The encoded key of the scope record of `session`'s scope (what an index files its items under). */
  scopeIdOf(session: SessionKey): string {
    return scopeOfSession(session, this.#fields).id;
  }

  /** The memory's data for a scope, as last stored. */
  async data(scope: SessionKeyFilter): Promise<D | undefined> {
    return (await this.#record(scopeKeyOf(scope)))?.data;
  }

  /** The memory's data for the scope `session` belongs to, as last stored. */
  async dataOf(session: SessionKey): Promise<D | undefined> {
    return (await this.#record(scopeOfSession(session, this.#fields).key))?.data;
  }

  /** Notes that `session` has new messages; processes them soon, off the caller's path. */
  notify(session: SessionKey): void {
    const { filter, id } = scopeOfSession(session, this.#fields);
    const queue = this.#queue(filter, id);
    queue.dirty.add(encodeSessionKey(session));
    this.#start(queue);
  }

  /** Catches up every session of `scope` whose messages were not all processed (after a crash, say); resolves when done. */
  async resume(scope: SessionKeyFilter): Promise<void> {
    const queue = this.#queue(scope, encodeSessionKey(scopeKeyOf(scope)));
    queue.caughtUp = false;
    this.#start(queue);
    await this.idle();
  }

  /** Resolves once no pass is running or queued (failed work waits for the next notice). */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.#queues.values()].flatMap((queue) => (queue.running ? [queue.running] : []));
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  #queue(scope: SessionKeyFilter, id: string): ScopeQueue {
    let queue = this.#queues.get(id);
    if (!queue) {
      queue = { id, scope, dirty: new Set(), caughtUp: this.#caughtUp.has(id) };
      this.#queues.set(id, queue);
    }
    return queue;
  }

  #start(queue: ScopeQueue): void {
    if (queue.running) return;
    queue.running = this.#drain(queue).then((finished) => {
      queue.running = undefined;
      if (queue.caughtUp) this.#rememberCaughtUp(queue.id);
      // A notice that came after the last check but before this: its work must not wait for the next turn.
      if (finished && queue.dirty.size > 0) this.#start(queue);
      // An idle scope keeps nothing in memory (a server sees many users).
      else if (finished && queue.dirty.size === 0) this.#queues.delete(queue.id);
    });
  }

  #rememberCaughtUp(id: string): void {
    this.#caughtUp.delete(id);
    this.#caughtUp.set(id, true);
    if (this.#caughtUp.size > CAUGHT_UP_LIMIT) this.#caughtUp.delete(this.#caughtUp.keys().next().value as string);
  }

  /** Passes until nothing is dirty; each pass holds the scope's lock. False when a pass failed (retried at the next notice). */
  async #drain(queue: ScopeQueue): Promise<boolean> {
    // Let the turn that noticed the work return first.
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.dirty.size > 0 || !queue.caughtUp) {
      try {
        await this.#pass(queue);
      } catch (error) {
        try {
          this.#onError(error, { scope: queue.scope, memory: this.#job.name, ...(this.#job.model ? { model: this.#job.model } : {}) });
        } catch {
          // a throwing hook must not turn a background failure into an unhandled rejection
        }
        return false;
      }
    }
    return true;
  }

  async #pass(queue: ScopeQueue): Promise<void> {
    const scopeKey = scopeKeyOf(queue.scope);
    await withScopeLock(this.#store, scopeKey, async (lock) => {
      let record: ScopeRecord<D> = (await this.#record(scopeKey)) ?? { cursors: {} };
      if (record.data !== undefined && this.#job.holds && !(await this.#job.holds(record.data, this.#store))) {
        record = { cursors: {} };
        queue.caughtUp = false;
      }
      if (!queue.caughtUp) {
        for (const id of await this.#behind(queue.scope, record)) queue.dirty.add(id);
        queue.caughtUp = true;
      }
      for (const id of [...queue.dirty]) {
        await this.#catchUpSession(queue, scopeKey, id, record, lock);
        queue.dirty.delete(id);
      }
    });
  }

  /** Sessions of the scope holding messages past their cursor. */
  async #behind(scope: SessionKeyFilter, record: ScopeRecord<D>): Promise<string[]> {
    const found: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#store.list(scope, { limit: 500, cursor });
      for (const key of page.sessions) {
        const id = encodeSessionKey(key);
        if ((await this.#store.count(key)) > (record.cursors[id] ?? 0)) found.push(id);
      }
      cursor = page.cursor;
    } while (cursor);
    return found;
  }

  /** Processes a session's new messages a batch at a time; each batch's result and cursor are stored together. */
  async #catchUpSession(queue: ScopeQueue, scopeKey: SessionKey, id: string, record: ScopeRecord<D>, lock: TurnLock): Promise<void> {
    const session = decodeSessionKey(id);
    for (;;) {
      const total = await this.#store.count(session);
      const done = Math.min(record.cursors[id] ?? 0, total); // a session that shrank (cleared, compacted, edited) goes on from its end
      if (total === done) {
        if ((record.cursors[id] ?? 0) !== total) await this.#save(scopeKey, record, id, total, record.data, lock);
        return;
      }
      const tail = await this.#store.read(session, { last: total - done });
      // A turn appended between the count and the read shifted the window: count again.
      if ((await this.#store.count(session)) !== total) continue;
      // One read per catch-up; each batch's result and mark are stored before the next batch starts.
      for (let from = 0; from < tail.length; from += this.#job.batchSize) {
        const messages = tail.slice(from, from + this.#job.batchSize);
        const data = await this.#job.process({
          store: this.#store,
          scope: queue.scope,
          scopeId: encodeSessionKey(scopeKey),
          session,
          sessionId: id,
          messages,
          first: done + from,
          data: record.data,
          now: Date.now(),
        });
        await this.#save(scopeKey, record, id, done + from + messages.length, data, lock);
      }
    }
  }

  async #save(scopeKey: SessionKey, record: ScopeRecord<D>, id: string, cursor: number, data: D | undefined, lock: TurnLock): Promise<void> {
    const cursors = namedValues([...Object.entries(record.cursors), [id, cursor]]) as Record<string, number>;
    await writeScopeRecord(this.#store, scopeKey, this.#job.name, { cursors, data }, lock);
    record.cursors = cursors;
    record.data = data;
  }

  #record(scopeKey: SessionKey): Promise<ScopeRecord<D> | undefined> {
    return readScopeRecord<D>(this.#store, scopeKey, this.#job.name);
  }
}

/** One worker per store and memory: a strategy serves every store it is used with. */
export class WorkRegistry<D> {
  readonly #byStore = new WeakMap<HistoryStore, ScopeWork<D>>();
  readonly #all = new Set<ScopeWork<D>>();

  constructor(
    private readonly job: ScopeJob<D>,
    private readonly fields: readonly string[] | undefined,
    private readonly onError: BackgroundErrorHandler,
  ) {}

  for(store: HistoryStore | undefined, what: string): ScopeWork<D> {
    if (!store) {
      throw new MemoriaError(
        "INVALID_ARGUMENT",
        `${what} keeps long-term memory in a memoria store: give RunnableWithMessageHistory a \`store\` (not a LangChain getMessageHistory).`,
      );
    }
    let work = this.#byStore.get(store);
    if (!work) {
      work = new ScopeWork(store, this.job, this.fields, this.onError);
      this.#byStore.set(store, work);
      this.#all.add(work);
    }
    return work;
  }

  async idle(): Promise<void> {
    await Promise.all([...this.#all].map((work) => work.idle()));
  }
}
