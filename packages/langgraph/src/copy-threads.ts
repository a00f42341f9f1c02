import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, ChannelVersions, CheckpointPendingWrite, CheckpointTuple, PendingWrite } from "@langchain/langgraph-checkpoint";

export interface CopyThreadsOptions {
  /** Only these threads. @default every thread `source.list({})` gives */
  threadIds?: readonly string[];
  /** More `configurable` fields for a thread on the target, e.g. its `userId` when the target's `keyFields` name one. */
  configurableOf?: (threadId: string) => Record<string, string>;
}

export interface CopyReport {
  threads: number;
  checkpoints: number;
  writes: number;
}

/**
 * Copies threads from any LangGraph checkpointer (`SqliteSaver`, `PostgresSaver`,
 * `MemorySaver`, …) into another, usually a `MemoriaSaver`: every checkpoint of every
 * namespace, oldest first, with its metadata, parent and pending writes, so
 * `getStateHistory`, time travel and resuming an interrupted run behave on the target
 * as they did on the source. Copying a thread again stores nothing twice.
 */
export async function copyThreads(source: BaseCheckpointSaver, target: BaseCheckpointSaver, options: CopyThreadsOptions = {}): Promise<CopyReport> {
  const threads = new Map<string, CheckpointTuple[]>();
  const lists = options.threadIds ? options.threadIds.map((threadId) => source.list({ configurable: { thread_id: threadId } })) : [source.list({})];
  for (const list of lists) {
    for await (const tuple of list) {
      const threadId = String(tuple.config.configurable?.thread_id);
      const tuples = threads.get(threadId) ?? [];
      tuples.push(tuple);
      threads.set(threadId, tuples);
    }
  }
  const report: CopyReport = { threads: threads.size, checkpoints: 0, writes: 0 };
  for (const [threadId, tuples] of threads) {
    const extra = options.configurableOf?.(threadId) ?? {};
    // Checkpoint ids are time-ordered (uuid6): parents sort before their children.
    tuples.sort((a, b) => idOf(a.config).localeCompare(idOf(b.config)));
    const versions = new Map<string, ChannelVersions>();
    for (const tuple of tuples) {
      const ns = String(tuple.config.configurable?.checkpoint_ns ?? "");
      const parentId = tuple.parentConfig ? idOf(tuple.parentConfig) : undefined;
      const base = { ...extra, thread_id: threadId, checkpoint_ns: ns };
      // The parent is read first, as LangGraph reads a checkpoint before building on it:
      // MemoriaSaver then accepts a branch from it, or a copy made again over the thread.
      if (parentId !== undefined) await target.getTuple({ configurable: { ...base, checkpoint_id: parentId } });
      const parentVersions = (parentId && versions.get(`${ns}\u0000${parentId}`)) || {};
      const newVersions = Object.fromEntries(
        Object.entries(tuple.checkpoint.channel_versions).filter(([channel, version]) => parentVersions[channel] !== version),
      );
      const config: RunnableConfig = { configurable: parentId === undefined ? base : { ...base, checkpoint_id: parentId } };
      const stored = await target.put(config, tuple.checkpoint, tuple.metadata ?? { source: "input", step: -1, parents: {} }, newVersions);
      versions.set(`${ns}\u0000${idOf(tuple.config)}`, tuple.checkpoint.channel_versions);
      report.checkpoints += 1;
      for (const [taskId, writes] of byTask(tuple.pendingWrites ?? [])) {
        await target.putWrites(stored, writes, taskId);
        report.writes += writes.length;
      }
    }
  }
  return report;
}

const idOf = (config: RunnableConfig): string => String(config.configurable?.checkpoint_id ?? "");

function byTask(writes: readonly CheckpointPendingWrite[]): Map<string, PendingWrite[]> {
  const tasks = new Map<string, PendingWrite[]>();
  for (const [taskId, channel, value] of writes) {
    const list = tasks.get(taskId) ?? [];
    list.push([channel, value]);
    tasks.set(taskId, list);
  }
  return tasks;
}
