import type { RunnableConfig } from "@langchain/core/runnables";

/** The session field a LangGraph `thread_id` is kept under, as `MemoriaSaver` keeps it. */
export const THREAD_FIELD = "threadId";

/**
 * The fields a call's config names its caller and conversation by: `configurable`,
 * then LangGraph's runtime `context` over it, with `thread_id` also under
 * {@link THREAD_FIELD} (a thread as `MemoriaSaver` keys it).
 */
export function callFields(config: RunnableConfig | undefined): Record<string, unknown> {
  const context = (config as { context?: unknown } | undefined)?.context;
  const fields: Record<string, unknown> = { ...(config?.configurable ?? {}), ...(typeof context === "object" && context !== null ? context : {}) };
  if (fields[THREAD_FIELD] === undefined && fields.thread_id !== undefined) fields[THREAD_FIELD] = fields.thread_id;
  return fields;
}
