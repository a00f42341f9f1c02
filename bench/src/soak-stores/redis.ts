/** The Redis store and LangChain's Redis history, for W13's worker processes. */
import { RedisChatMessageHistory } from "@langchain/community/stores/message/ioredis";
import { createRedisStore } from "@memoria/redis";
import { Redis } from "ioredis";

export const createStore = (url: string) => createRedisStore({ url, keyPrefix: "soak:" });

let client: Redis | undefined;
export function langchainHistory(url: string, sessionId: string) {
  client ??= new Redis(url).on("error", () => {});
  return new RedisChatMessageHistory({ sessionId: `soak-langchain:${sessionId}`, client });
}

/** Ends the client `langchainHistory` opened in this process (the bench's audit), so the process can exit. */
export async function closeLangchainHistories(): Promise<void> {
  client?.disconnect();
  client = undefined;
}
