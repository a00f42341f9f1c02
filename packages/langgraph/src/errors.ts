import { MemoriaError } from "@memoria/core";

/**
 * A second run wrote to a thread that another run had moved on meanwhile: saving
 * its checkpoint would silently fork the thread. Nothing was written. Runs of one
 * thread must follow each other; retry after the other run ends (LangGraph
 * Platform calls this the "reject" multitask strategy).
 */
export class ThreadBusyError extends MemoriaError {
  readonly threadId: string;
  readonly checkpointNs: string;

  constructor(threadId: string, checkpointNs: string, parentId: string, headId: string) {
    super(
      "SESSION_BUSY",
      `Thread ${JSON.stringify(threadId)}${checkpointNs ? ` (namespace ${JSON.stringify(checkpointNs)})` : ""} moved on to checkpoint ${headId} ` +
        `while this run was still working from ${parentId === "a new thread" ? "an empty thread" : parentId}: another run is using the thread. Nothing was saved; run one turn of a thread at a time, ` +
        "or to branch from an earlier checkpoint on purpose, pass its checkpoint_id in the config.",
    );
    this.threadId = threadId;
    this.checkpointNs = checkpointNs;
  }
}
