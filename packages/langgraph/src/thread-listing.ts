import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointMetadata, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { type HistoryStore, type JsonValue, type SessionKey, createKeyFilter } from "@memoria/core";
import { type TupleContext, toTuple } from "./checkpoint-tuple.js";
import { type CheckpointRecord, parseCheckpoint, parseWrites } from "./records.js";
import { loadValue } from "./stored-value.js";
import { THREAD_FIELD, addressOfKey, stateNames } from "./thread-address.js";
import type { ThreadPools } from "./thread-pools.js";

export interface ThreadListOptions {
  ns?: string;
  id?: string;
  before?: RunnableConfig;
  filter?: Record<string, unknown>;
  limit?: number;
}

/** Every thread session in the store whose key matches the config's key fields. */
export async function* threadsOf(store: HistoryStore, keyFields: readonly string[], config: RunnableConfig): AsyncGenerator<SessionKey> {
  const configurable = (config.configurable ?? {}) as Record<string, unknown>;
  const filter = createKeyFilter(
    Object.fromEntries(keyFields.filter((field) => configurable[field] !== undefined).map((field) => [field, configurable[field]])),
  );
  let cursor: string | undefined;
  do {
    const page = await store.list(filter, cursor === undefined ? {} : { cursor });
    for (const key of page.sessions) if (key[THREAD_FIELD] !== undefined) yield key;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

/**
 * One thread's checkpoints, newest first, from one read of all its state:
 * `list` backs LangGraph's `getStateHistory`, which walks the whole thread.
 */
export async function* listThread(
  context: TupleContext,
  store: HistoryStore,
  pools: ThreadPools,
  key: SessionKey,
  keyFields: readonly string[],
  options: ThreadListOptions,
): AsyncGenerator<CheckpointTuple> {
  if (options.limit !== undefined && options.limit <= 0) return;
  const state = await store.getAllState(key);
  const records = new Map<string, CheckpointRecord>();
  for (const [name, value] of Object.entries(state)) {
    if (!stateNames.isCheckpoint(name)) continue;
    records.set(name, parseCheckpoint(value, name) as CheckpointRecord);
  }
  const before = options.before?.configurable?.checkpoint_id as string | undefined;
  const chosen = [...records.values()]
    .filter((record) => (options.ns === undefined || record.ns === options.ns) && (options.id === undefined || record.id === options.id))
    .filter((record) => before === undefined || record.id < before)
    .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  let left = options.limit;
  for (const record of chosen) {
    if (options.filter) {
      const metadata = (await loadValue(context.serde, record.metadata, "checkpoint metadata")) as CheckpointMetadata & Record<string, unknown>;
      if (!Object.entries(options.filter).every(([field, value]) => metadata[field] === value)) continue;
    }
    const address = addressOfKey(key, keyFields, record.ns);
    const fromState = (name: string): JsonValue | undefined => (Object.hasOwn(state, name) ? state[name] : undefined);
    yield await toTuple(context, address, record, {
      checkpoint: async (id) => records.get(stateNames.checkpoint(record.ns, id)),
      writes: async (id) => {
        const name = stateNames.writes(record.ns, id);
        return parseWrites(fromState(name), name);
      },
      pool: (length) => pools.get(key, length),
    });
    if (left !== undefined && --left <= 0) return;
  }
}
