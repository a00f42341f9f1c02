import type { MemoryStrategy } from "@memoria/core";

/** The whole conversation (LangChain's ConversationBufferMemory). memoria's wrapper uses it by default. */
export function bufferMemory(): MemoryStrategy {
  return { name: "buffer", load: ({ read }) => read(), firstRead: {} };
}
