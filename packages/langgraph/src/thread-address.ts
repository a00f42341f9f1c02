import type { RunnableConfig } from "@langchain/core/runnables";
import { InvalidSessionKeyError, type SessionKey, createSessionKey } from "@memoria/core";
import { createHash } from "node:crypto";

/** The session key field a LangGraph `thread_id` is stored under. */
export const THREAD_FIELD = "threadId";

/** One thread's checkpoint namespace, as memoria stores it. */
export interface ThreadAddress {
  /** The memoria session holding the thread: `{ threadId }` plus the saver's `keyFields`. */
  readonly key: SessionKey;
  readonly threadId: string;
  /** LangGraph's `checkpoint_ns`: `""` for the graph itself, a path for a subgraph. */
  readonly ns: string;
  /** The `configurable` fields every config this saver returns carries. */
  readonly configurable: Readonly<Record<string, string>>;
}

const HINT = 'Pass it in the call\'s config, e.g. graph.invoke(input, { configurable: { thread_id: "t1" } })';

/** The thread named by a config, or undefined when it names none (`thread_id` missing). */
export function threadAddress(config: RunnableConfig, keyFields: readonly string[]): ThreadAddress | undefined {
  const configurable = (config.configurable ?? {}) as Record<string, unknown>;
  const raw = Object.hasOwn(configurable, "thread_id") ? configurable.thread_id : undefined;
  if (raw === undefined || raw === null) return undefined;
  const threadId = typeof raw === "number" && Number.isSafeInteger(raw) ? String(raw) : raw;
  if (typeof threadId !== "string") throw new InvalidSessionKeyError("thread_id", `expected a string, got ${typeof threadId}`, HINT);
  const nsRaw = Object.hasOwn(configurable, "checkpoint_ns") ? configurable.checkpoint_ns : undefined;
  const ns = nsRaw ?? "";
  if (typeof ns !== "string") throw new InvalidSessionKeyError("checkpoint_ns", `expected a string, got ${typeof ns}`);
  const fields: Record<string, unknown> = {};
  for (const field of keyFields) fields[field] = Object.hasOwn(configurable, field) ? configurable[field] : undefined;
  fields[THREAD_FIELD] = threadId;
  return addressOfKey(createSessionKey(fields), keyFields, ns);
}

/** Like {@link threadAddress}, for calls that cannot go on without a thread. */
export function requireThread(config: RunnableConfig, keyFields: readonly string[], call: string): ThreadAddress {
  const address = threadAddress(config, keyFields);
  if (!address) throw new InvalidSessionKeyError("thread_id", `${call}() needs configurable.thread_id, so the saver knows which thread to persist`, HINT);
  return address;
}

/** The address of a thread found by listing the store. */
export function addressOfKey(key: SessionKey, keyFields: readonly string[], ns: string): ThreadAddress {
  const threadId = key[THREAD_FIELD] as string;
  const extra: Record<string, string> = {};
  for (const field of keyFields) if (key[field] !== undefined) extra[field] = key[field] as string;
  return { key, threadId, ns, configurable: { ...extra, thread_id: threadId, checkpoint_ns: ns } };
}

function digest(parts: readonly string[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("base64url").slice(0, 22);
}

/**
 * The state names a thread's records live under. Namespaces and checkpoint ids are
 * free text, so names carry a digest of them (a state name is at most 64 plain
 * characters) and each record holds its namespace and id in full.
 */
export const stateNames = {
  /** The newest checkpoint of a namespace. */
  head: (ns: string) => `lg.h.${digest([ns])}`,
  /** One checkpoint. */
  checkpoint: (ns: string, id: string) => `lg.c.${digest([ns, id])}`,
  /** The pending writes saved against one checkpoint. */
  writes: (ns: string, id: string) => `lg.w.${digest([ns, id])}`,
  isCheckpoint: (name: string) => name.startsWith("lg.c."),
} as const;
