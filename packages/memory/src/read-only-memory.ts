import type { MemoryStrategy } from "@memoria/core";

/**
 * A read-only view of another strategy (LangChain's ReadOnlySharedMemory): it
 * loads what `inner` loads, but the wrapper stores nothing of its turns and the
 * inner strategy cannot write its state. For a tool or sub-agent that may consult
 * a conversation without changing it.
 */
export function readOnlyMemory(inner: MemoryStrategy): MemoryStrategy {
  return {
    name: `read-only(${inner.name})`,
    readonly: true,
    firstRead: inner.firstRead,
    load: (context) => inner.load({ ...context, state: { get: (name) => context.state.get(name), set: async () => {} } }),
  };
}
