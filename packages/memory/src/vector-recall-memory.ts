import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { type HistoryStore, MemoriaError, type MemoryLoadContext, type MemoryStrategy, type RecallIndex, encodeSessionKey } from "@memoria/core";
import { contextMessage, linesOf, textOfMessages, unprocessed } from "./extraction.js";
import { quoteMessages } from "./quoting.js";
import { defaultIndex } from "./long-term/default-index.js";
import { readLastTurns } from "./turn-window.js";

export interface VectorRecallMemoryOptions {
  /** Any LangChain embeddings (OpenAIEmbeddings, …; HashingEmbeddings offline). */
  embeddings: EmbeddingsInterface;
  /** How many earlier messages to recall. @default 4 */
  k?: number;
  /** Recent turns kept word for word (never recalled twice). @default 3 */
  window?: number;
  /** Only the newest this many messages are recalled. @default 2000 */
  maxIndexed?: number;
  /** Where the vectors live. @default the store's own index (sqlite-vec on SQLite), else an exact scan in this process */
  index?: RecallIndex;
  /** The state value holding how many messages were embedded. @default "vectors" */
  stateName?: string;
}

function indexOf(store: HistoryStore | undefined, given: RecallIndex | undefined): RecallIndex {
  if (given) return given;
  if (!store) throw new MemoriaError("INVALID_ARGUMENT", "vectorRecallMemory needs a memoria store (or an `index`) to keep its vectors.");
  return defaultIndex(store);
}

/**
 * The recent window, plus the `k` earlier messages of this conversation most
 * similar to the input (LangChain's VectorStoreRetrieverMemory, kept with the
 * session). Each message is embedded once, after its turn is saved and still
 * under its lock, so the next turn can recall it; the vectors live in a recall
 * index (the SQL store's rows are erased with the session), the count of
 * embedded messages in the session's state. For recall across conversations,
 * off the turn, see `recallMemory`.
 */
export function vectorRecallMemory(options: VectorRecallMemoryOptions): MemoryStrategy {
  const k = options.k ?? 4;
  const window = options.window ?? 3;
  const maxIndexed = options.maxIndexed ?? 2000;
  if (!Number.isInteger(k) || k < 0) throw new MemoriaError("INVALID_ARGUMENT", `vectorRecallMemory: k must be a whole number >= 0, got ${k}.`);
  const name = options.stateName ?? "vectors";

  async function catchUp(context: MemoryLoadContext): Promise<void> {
    const saved = (await context.state.get(name)) as { processed?: number } | undefined;
    const { messages, total } = await unprocessed(context, saved?.processed ?? 0, 500);
    if (messages.length === 0) return;
    const first = total - messages.length;
    const fresh = messages
      .map((message, offset) => ({
        position: first + offset,
        line: linesOf([message]),
        keep: ["human", "ai"].includes(message.getType()) && textOfMessages([message]).trim() !== "",
      }))
      .filter((item) => item.keep);
    const vectors = await options.embeddings.embedDocuments(fresh.map((item) => item.line));
    const id = encodeSessionKey(context.sessionKey);
    const at = Date.now();
    await indexOf(context.store, options.index).upsert(
      fresh.map((item, n) => ({ scope: id, session: id, position: item.position, at, vector: vectors[n] ?? [] })),
    );
    await context.state.set(name, { processed: total });
  }

  return {
    name: `vector-recall(k=${k}, window=${window})`,
    async load(context) {
      await catchUp(context);
      const recent = await readLastTurns((o) => context.read(o), window);
      const total = await context.count();
      const windowStart = total - recent.length;
      const query = textOfMessages(context.input);
      if (k === 0 || windowStart <= 0 || !query.trim()) return recent;
      const id = encodeSessionKey(context.sessionKey);
      const hits = (await indexOf(context.store, options.index).search(id, await options.embeddings.embedQuery(query), k + recent.length))
        .filter((hit) => hit.score > 0 && hit.position < windowStart && hit.position >= total - maxIndexed)
        .slice(0, k)
        .sort((a, b) => a.position - b.position);
      if (hits.length === 0) return recent;
      const from = hits[0]?.position as number;
      const older = await context.read({ last: total - from });
      const lines = hits.map((hit) => quoteMessages([older[hit.position - from] as (typeof older)[number]]));
      return [...contextMessage("recall", "Earlier in this conversation", lines), ...recent];
    },
    async afterSave(context) {
      await catchUp(context);
    },
  };
}
