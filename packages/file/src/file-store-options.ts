import type { HistoryStore } from "@memoria/core";

export interface FileStoreOptions {
  /** The folder holding the sessions' files; created if missing. */
  directory: string;
  /**
   * `"always"`: each append is fsynced before it resolves, so a stored turn
   * survives power loss. `"none"`: it survives the process being killed (the
   * kernel has it) but may be lost if the machine loses power.
   * @default "always"
   */
  fsync?: "always" | "none";
  /**
   * Seconds a session lives after its last write (by the file's modification
   * time); unset, sessions never expire. Expired files are deleted by `prune()`.
   */
  ttlSeconds?: number;
  /**
   * How many sessions' bookkeeping (count, turn ids) and recent turns this process
   * keeps (recent turns: up to 8 MiB of a session's file, 64 MiB over all).
   * @default 1_000
   */
  cacheSessions?: number;
  /**
   * Keep the recent turns this process caches as deeply frozen messages, decoded
   * once, and give every read those same objects (in a new array): a read of a
   * cached session then costs a `stat` (to see other processes' writes) and an
   * array, never a rebuild of each message. Nothing stored can change: changing a
   * message a read returned throws a `TypeError` (older messages, read past the
   * cache, come as copies of their own). Set it to `false` for code that edits the
   * messages it reads (LangGraph's `messagesStateReducer` gives an id to each
   * message that has none, in place): every read then decodes fresh copies.
   * The in-memory store's option of the same name does the same.
   * @default true
   */
  frozen?: boolean;
}

export interface FileHistoryStore extends HistoryStore {
  /** Deletes the files of expired sessions; resolves with how many sessions. */
  prune(): Promise<number>;
}
