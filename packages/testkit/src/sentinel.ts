import { HumanMessage } from "@langchain/core/messages";
import type { HistoryStore } from "@memoria/core";

/**
 * Writes, under the session's turn lock, a message, a summary, a title and
 * metadata that all hold `sentinel`: what erasure tests then look for in the
 * store's files.
 */
export async function writeSentinelTurn(store: HistoryStore, key: Record<string, string>, sentinel: string): Promise<void> {
  if (!store.lock) throw new Error(`${store.name} has no lock()`);
  const held = await store.lock(key);
  try {
    await store.append(key, [new HumanMessage(`${sentinel} in a message`)], { lock: held });
    await store.setState(key, "summary", `${sentinel} in a summary`, { lock: held });
    await store.setInfo?.(key, { title: `${sentinel} in a title`, metadata: { note: `${sentinel} in metadata` } }, { lock: held });
  } finally {
    await held.release();
  }
}
