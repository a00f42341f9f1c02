import type { BaseMessage } from "@langchain/core/messages";
import {
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type SerializerProtocol,
  TASKS,
  compareWritesSortKeys,
  maxChannelVersion,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { MemoriaError } from "@memoria/core";
import { namedValues } from "@memoria/core/store-kit";
import type { MessagePool, Ranges } from "./message-pool.js";
import type { CheckpointRecord, WritesRecord } from "./records.js";
import { loadValue } from "./stored-value.js";
import type { ThreadAddress } from "./thread-address.js";

/** Where a tuple's parts are read from: single reads for `getTuple`, one bulk read for `list`. */
export interface RecordSource {
  checkpoint(id: string): Promise<CheckpointRecord | undefined>;
  writes(id: string): Promise<WritesRecord>;
  /** The thread's message pool, holding at least `length` messages if the store does. */
  pool(length: number): Promise<MessagePool>;
}

export interface TupleContext {
  serde: SerializerProtocol;
  /** The version LangGraph gives a channel first written now: the saver's `getNextVersion(undefined)`. */
  firstVersion(): number | string;
}

/** Rebuilds the checkpoint tuple LangGraph stored, from a record and what it refers to. */
export async function toTuple(context: TupleContext, address: ThreadAddress, record: CheckpointRecord, source: RecordSource): Promise<CheckpointTuple> {
  const [checkpoint, metadata, channelValues, pendingWrites] = await Promise.all([
    loadValue(context.serde, record.checkpoint, "checkpoint") as Promise<Checkpoint>,
    loadValue(context.serde, record.metadata, "checkpoint metadata") as Promise<CheckpointMetadata>,
    channelValuesOf(context, record, source),
    pendingWritesOf(context, (await source.writes(record.id)).w),
  ]);
  checkpoint.channel_values = channelValues;
  if (checkpoint.v < 4 && record.parent !== null) await migratePendingSends(context, checkpoint, await source.writes(record.parent));
  const configurable = { ...address.configurable, checkpoint_ns: record.ns, checkpoint_id: record.id };
  const tuple: CheckpointTuple = { config: { configurable }, checkpoint, metadata, pendingWrites };
  if (record.parent !== null) tuple.parentConfig = { configurable: { ...configurable, checkpoint_id: record.parent } };
  return tuple;
}

async function channelValuesOf(context: TupleContext, record: CheckpointRecord, source: RecordSource): Promise<Record<string, unknown>> {
  const owners = new Map<string, Promise<CheckpointRecord | undefined>>();
  for (const [, id] of record.at) {
    if (id !== record.id && !owners.has(id)) owners.set(id, source.checkpoint(id));
  }
  const entries = await Promise.all(
    record.at.map(async ([channel, id]): Promise<[string, unknown]> => {
      const owner = id === record.id ? record : await owners.get(id);
      const stored = owner?.values.find(([name]) => name === channel)?.[1];
      if (stored === undefined) {
        throw new MemoriaError("CORRUPT_DATA", `Checkpoint ${record.id} takes channel "${channel}" from checkpoint ${id}, which does not hold it.`);
      }
      if ("p" in stored) return [channel, await messagesOf(stored.p, source, record.id)];
      return [channel, await loadValue(context.serde, stored, `value of channel "${channel}"`)];
    }),
  );
  return namedValues<unknown>(entries);
}

async function messagesOf(ranges: Ranges, source: RecordSource, checkpointId: string): Promise<BaseMessage[]> {
  const end = ranges.reduce((most, [, to]) => Math.max(most, to), 0);
  const messages = (await source.pool(end)).slice(ranges);
  if (messages === undefined) {
    throw new MemoriaError(
      "CORRUPT_DATA",
      `Checkpoint ${checkpointId} refers to ${end} messages of its thread, which holds fewer: the thread's messages were edited or trimmed outside LangGraph.`,
    );
  }
  return messages;
}

/** Pending writes in the order LangGraph applies them: `writesSortKey`. */
async function pendingWritesOf(context: TupleContext, entries: WritesRecord["w"]): Promise<CheckpointPendingWrite[]> {
  const ordered = [...entries].sort((a, b) => compareWritesSortKeys(writesSortKey(a[4], a[0], a[1]), writesSortKey(b[4], b[0], b[1])));
  return Promise.all(
    ordered.map(
      async ([taskId, , channel, value]): Promise<CheckpointPendingWrite> => [taskId, channel, await loadValue(context.serde, value, "pending write")],
    ),
  );
}

/**
 * Checkpoints of format 3 and older kept pending `Send`s as writes to the parent's
 * TASKS channel; LangGraph reads them as the checkpoint's TASKS value.
 */
async function migratePendingSends(context: TupleContext, checkpoint: Checkpoint, parentWrites: WritesRecord): Promise<void> {
  const sends = parentWrites.w.filter(([, , channel]) => channel === TASKS);
  const ordered = await pendingWritesOf(context, sends);
  checkpoint.channel_values ??= {};
  checkpoint.channel_values[TASKS] = ordered.map(([, , value]) => value);
  checkpoint.channel_versions ??= {};
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : context.firstVersion();
}
