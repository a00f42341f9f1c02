import { isBaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
  WRITES_IDX_MAP,
  copyCheckpoint,
  getCheckpointId,
} from "@langchain/langgraph-checkpoint";
import {
  type HistoryStore,
  InvalidSessionKeyError,
  type JsonValue,
  type LockOptions,
  MemoriaError,
  SessionPromptRecorder,
  type TurnLock,
  decodeSessionKey,
  encodeSessionKey,
} from "@memoria/core";
import { validateSessionFields } from "@memoria/core/store-kit";
import { type RecordSource, toTuple } from "./checkpoint-tuple.js";
import { ThreadBusyError } from "./errors.js";
import {
  type ChannelValue,
  type CheckpointRecord,
  type HeadRecord,
  type Locations,
  type WriteEntry,
  asJson,
  parseCheckpoint,
  parseHead,
  parseWrites,
} from "./records.js";
import { type StoredValue, storeValue } from "./stored-value.js";
import { THREAD_FIELD, type ThreadAddress, requireThread, stateNames, threadAddress } from "./thread-address.js";
import { LockedState } from "./locked-state.js";
import { ThreadLocks } from "./thread-lock.js";
import { ThreadPools } from "./thread-pools.js";
import { listThread, threadsOf } from "./thread-listing.js";

export interface MemoriaSaverOptions {
  /** Where threads live: any memoria `HistoryStore`, bare or wrapped (`encryptStore`, `guardStore`, …). */
  store: HistoryStore;
  /**
   * More `configurable` fields that name a thread's session besides `thread_id`,
   * e.g. `["userId"]`: then `store.delete({ userId })` erases a user's threads.
   * @default []
   */
  keyFields?: readonly string[];
  /**
   * Channels whose values are lists of messages, kept once in the thread's memoria
   * session instead of copied into every checkpoint (the graph's own namespace only).
   * @default ["messages"]
   */
  messageChannels?: readonly string[];
  /** The turn lock each write takes: its lease and how long to wait for it. */
  lock?: Pick<LockOptions, "ttlMs" | "waitMs">;
  serde?: SerializerProtocol;
}

/** Checkpoint ids read on purpose (time travel) that a put may branch from, per thread and namespace. */
const FORKS_KEPT = 1_000;

/**
 * LangGraph's checkpointer on any memoria store: `createAgent({ checkpointer: new
 * MemoriaSaver({ store }) })`. A thread is a memoria session (`{ threadId }`, plus
 * `keyFields`), so the memoria CLI, studio, TTL, erasure and encryption cover it.
 * Its messages are stored once, as the session's messages; each checkpoint keeps
 * what changed and where the rest lives.
 */
export class MemoriaSaver extends BaseCheckpointSaver {
  readonly store: HistoryStore;
  readonly #keyFields: readonly string[];
  readonly #messageChannels: ReadonlySet<string>;
  readonly #locks: ThreadLocks;
  readonly #pools: ThreadPools;
  readonly #state: LockedState;
  readonly #forks = new Set<string>();
  /** Threads (and namespaces) this saver last found empty: a run there starts a new thread, and must be the only one to. */
  readonly #seenEmpty = new Set<string>();

  constructor(options: MemoriaSaverOptions) {
    super(options.serde);
    if (!options?.store) throw new MemoriaError("INVALID_ARGUMENT", "MemoriaSaver needs a store, e.g. new MemoriaSaver({ store: createSqliteStore() }).");
    this.store = options.store;
    const keyFields = options.keyFields ?? [];
    this.#keyFields = keyFields.length === 0 ? [] : validateSessionFields(keyFields);
    if (this.#keyFields.includes(THREAD_FIELD)) throw new MemoriaError("INVALID_ARGUMENT", `keyFields cannot name "${THREAD_FIELD}": it holds the thread_id.`);
    this.#messageChannels = new Set(options.messageChannels ?? ["messages"]);
    this.#locks = new ThreadLocks(this.store, options.lock ?? {});
    this.#pools = new ThreadPools(this.store);
    this.#state = new LockedState(this.store);
  }

  /**
   * Gives back the turn locks kept between a run's writes now, rather than a few
   * milliseconds after the last one. A process that ends on its own does this by
   * itself; call it before `process.exit()`.
   */
  async releaseLocks(): Promise<void> {
    await this.#locks.releaseAll();
  }

  /**
   * A callback handler that keeps what each model call of one run on the thread
   * `config` names was given, as the turn's prompt record ("What the model saw" in
   * `memoria studio`): `graph.invoke(input, { ...config, callbacks:
   * [saver.promptRecorder(config)] })`. One per run.
   */
  promptRecorder(config: RunnableConfig): SessionPromptRecorder {
    return new SessionPromptRecorder(this.store, requireThread(config, this.#keyFields, "promptRecorder").key);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const address = threadAddress(config, this.#keyFields);
    if (!address) return undefined;
    let id = getCheckpointId(config);
    if (id) {
      this.#remember(this.#forks, this.#forkKey(address, id), true);
    } else {
      const headName = stateNames.head(address.ns);
      const head = parseHead(await this.store.getState(address.key, headName), headName);
      this.#remember(this.#seenEmpty, this.#forkKey(address, ""), !head);
      if (!head) return undefined;
      id = head.id;
    }
    const name = stateNames.checkpoint(address.ns, id);
    const record = parseCheckpoint(await this.store.getState(address.key, name), name);
    return record && toTuple(this.#context, address, record, this.#singleReads(address));
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const address = threadAddress(config, this.#keyFields);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? undefined;
    const id = getCheckpointId(config) || undefined;
    let limit = options.limit;
    const threads = address ? [address.key] : threadsOf(this.store, this.#keyFields, config);
    for await (const key of threads) {
      for await (const tuple of listThread(this.#context, this.store, this.#pools, key, this.#keyFields, { ns, id, ...options, limit })) {
        yield tuple;
        if (limit !== undefined) limit -= 1;
      }
      if (limit !== undefined && limit <= 0) return;
    }
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const address = requireThread(config, this.#keyFields, "put");
    const parentId = getCheckpointId(config) || undefined;
    const headName = stateNames.head(address.ns);
    await this.#locks.run(address.key, async (lock) => {
      const head = parseHead(await this.#state.get(address.key, headName, lock), headName);
      const base = await this.#baseLocations(address, head, parentId, checkpoint.id);
      const values: [string, ChannelValue][] = [];
      const changed = Object.keys(newVersions).filter((channel) => Object.hasOwn(checkpoint.channel_values, channel));
      for (const [index, channel] of changed.entries()) {
        values.push([
          channel,
          await this.#channelValue(address, channel, checkpoint.channel_values[channel], lock, `${stateNames.checkpoint(address.ns, checkpoint.id)}/${index}`),
        ]);
      }
      // A channel keeps the value the parent located for it while its version stays; one the checkpoint no longer versions has none.
      const carried = base.filter(([channel]) => !Object.hasOwn(newVersions, channel) && Object.hasOwn(checkpoint.channel_versions, channel));
      const at: Locations = [...carried, ...changed.map((channel): [string, string] => [channel, checkpoint.id])];
      const bare = copyCheckpoint(checkpoint);
      bare.channel_values = {};
      const record: CheckpointRecord = {
        v: 1,
        ns: address.ns,
        id: checkpoint.id,
        parent: parentId ?? null,
        checkpoint: await storeValue(this.serde, bare, "checkpoint"),
        metadata: await storeValue(this.serde, metadata, "checkpoint's metadata"),
        values,
        at,
      };
      // The checkpoint and (when it is the newest) the head, in one write where the store can.
      const writes: [string, JsonValue][] = [[stateNames.checkpoint(address.ns, checkpoint.id), asJson(record)]];
      if (!head || checkpoint.id >= head.id) writes.push([headName, asJson({ v: 1, id: checkpoint.id, at })]);
      await this.#state.setAll(address.key, writes, lock);
    });
    this.#seenEmpty.delete(this.#forkKey(address, ""));
    return { configurable: { ...address.configurable, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const address = requireThread(config, this.#keyFields, "putWrites");
    const id = getCheckpointId(config);
    if (!id) throw new MemoriaError("INVALID_ARGUMENT", "putWrites() needs configurable.checkpoint_id: the checkpoint the writes belong to.");
    if (typeof taskId !== "string" || taskId.length === 0) throw new MemoriaError("INVALID_ARGUMENT", "putWrites() needs a task id.");
    const stored = await Promise.all(writes.map(([channel, value]) => storeValue(this.serde, value, `pending write to channel ${JSON.stringify(channel)}`)));
    const name = stateNames.writes(address.ns, id);
    await this.#locks.run(address.key, async (lock) => {
      const record = parseWrites(await this.#state.get(address.key, name, lock), name);
      for (const [position, [channel]] of writes.entries()) {
        // Special channels (errors, interrupts) have a fixed negative slot and are replaced; others are kept as first written.
        const idx = WRITES_IDX_MAP[channel] ?? position;
        const existing = record.w.findIndex(([task, i]) => task === taskId && i === idx);
        const entry: WriteEntry = [taskId, idx, channel, stored[position] as StoredValue, taskPath ?? ""];
        if (existing < 0) record.w.push(entry);
        else if (idx < 0) record.w[existing] = entry;
      }
      await this.#state.set(address.key, name, asJson(record), lock);
    });
  }

  /**
   * Deletes a thread: its checkpoints, pending writes and messages. With `keyFields`,
   * a `thread_id` names a thread per user, so the call names whose it is:
   * `deleteThread("t1", { userId: "ada" })`. Without them it is refused (nothing is
   * deleted): every user's "t1" is never what one user's request means.
   */
  override async deleteThread(threadId: string, fields: Readonly<Record<string, string>> = {}): Promise<void> {
    for (const field of Object.keys(fields)) {
      if (!this.#keyFields.includes(field))
        throw new InvalidSessionKeyError(field, `deleteThread() takes only the saver's keyFields (${this.#keyFields.join(", ") || "none"})`);
    }
    for (const field of this.#keyFields) {
      if (fields[field] === undefined) {
        throw new InvalidSessionKeyError(
          field,
          `deleteThread() on a saver with keyFields needs the thread's ${field}, or it would delete every user's thread of that id`,
          `Pass it: saver.deleteThread(${JSON.stringify(threadId)}, { ${field}: … })`,
        );
      }
    }
    const { key } = requireThread({ configurable: { ...fields, thread_id: threadId } }, this.#keyFields, "deleteThread");
    await this.store.delete(key);
    this.#state.forget();
    // The store deleted every session the key matches (one with more fields too): so are their pools.
    this.#pools.forget((pooled) => {
      const held = decodeSessionKey(pooled);
      return Object.keys(key).every((field) => held[field] === key[field]);
    });
  }

  get #context() {
    return { serde: this.serde, firstVersion: () => this.getNextVersion(undefined) };
  }

  #singleReads(address: ThreadAddress): RecordSource {
    return {
      checkpoint: async (id) => {
        const name = stateNames.checkpoint(address.ns, id);
        return parseCheckpoint(await this.store.getState(address.key, name), name);
      },
      writes: async (id) => {
        const name = stateNames.writes(address.ns, id);
        return parseWrites(await this.store.getState(address.key, name), name);
      },
      pool: (length) => this.#pools.get(address.key, length),
    };
  }

  /** Where the parent's channel values live, after checking the put does not fork the thread behind another run's back. */
  async #baseLocations(address: ThreadAddress, head: HeadRecord | undefined, parentId: string | undefined, id: string): Promise<Locations> {
    if (parentId === undefined) {
      // A run that found the thread empty starts it; if another run started it meanwhile, this one must not start a second line.
      if (head && head.id !== id && this.#seenEmpty.has(this.#forkKey(address, "")))
        throw new ThreadBusyError(address.threadId, address.ns, "a new thread", head.id);
      return [];
    }
    if (head?.id === parentId) return head.at;
    if (head && head.id !== id && !this.#forks.has(this.#forkKey(address, parentId))) {
      throw new ThreadBusyError(address.threadId, address.ns, parentId, head.id);
    }
    const parent = await this.#singleReads(address).checkpoint(parentId);
    return parent?.at ?? [];
  }

  async #channelValue(address: ThreadAddress, channel: string, value: unknown, lock: TurnLock | undefined, turnId: string): Promise<ChannelValue> {
    if (address.ns === "" && this.#messageChannels.has(channel) && Array.isArray(value) && value.every((item) => isBaseMessage(item))) {
      const ranges = await this.#pools.keep(address.key, value, lock, turnId);
      if (ranges) return { p: ranges };
    }
    return storeValue(this.serde, value, `value of channel ${JSON.stringify(channel)}`);
  }

  #forkKey(address: ThreadAddress, id: string): string {
    return JSON.stringify([encodeSessionKey(address.key), address.ns, id]);
  }

  /** Adds (most recent last) or removes an entry of a bounded set. */
  #remember(set: Set<string>, key: string, present: boolean): void {
    set.delete(key);
    if (!present) return;
    set.add(key);
    if (set.size > FORKS_KEPT) set.delete(set.values().next().value as string);
  }
}
