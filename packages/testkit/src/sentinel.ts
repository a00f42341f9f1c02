import { HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, scopeKeyOf } from "@memoria/core";

/**
 * Writes, under the session's turn lock, a message, a summary, a title and
 * metadata that all hold `sentinel`: what erasure tests then look for in the
 * store's files.
 */
export async function writeSentinelTurn(store: HistoryStore, key: Record<string, string>, sentinel: string): Promise<void> {
  const held = await store.lock(key);
  try {
    await store.append(key, [new HumanMessage(`${sentinel} in a message`)], { lock: held });
    await store.setState(key, "summary", `${sentinel} in a summary`, { lock: held });
    await store.setInfo(key, { title: `${sentinel} in a title`, metadata: { note: `${sentinel} in metadata` } }, { lock: held });
  } finally {
    await held.release();
  }
}

/**
 * Writes, under the scope record's lock, what long-term memory keeps for a scope
 * (`{ userId }`): facts and a profile that hold `sentinel`. Erasure tests then
 * look for it after `delete(scope)`.
 */
export async function writeSentinelMemory(store: HistoryStore, scope: Record<string, string>, sentinel: string): Promise<void> {
  const key = scopeKeyOf(scope);
  const held = await store.lock(key);
  try {
    const fact = {
      id: "f1",
      subject: "the user",
      statement: `${sentinel} in a fact`,
      source: { session: "sessionId=s", message: 0 },
      since: new Date().toISOString(),
    };
    await store.setState(key, "facts", { data: { facts: [fact], next: 2 }, cursors: { "sessionId=s": 1 } }, { lock: held });
    await store.setState(key, "profile", { data: { profile: `${sentinel} in a profile`, updatedAt: Date.now() }, cursors: {} }, { lock: held });
  } finally {
    await held.release();
  }
}
