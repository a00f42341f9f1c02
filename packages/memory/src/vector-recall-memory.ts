import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { type JsonValue, MemoriaError, type MemoryLoadContext, type MemoryStrategy } from "@memoria/core";
import { contextMessage, linesOf, textOfMessages, unprocessed } from "./extraction.js";
import { readLastTurns } from "./turn-window.js";

export interface VectorRecallMemoryOptions {
  /** Any LangChain embeddings (OpenAIEmbeddings, …; HashingEmbeddings offline). */
  embeddings: EmbeddingsInterface;
  /** How many earlier messages to recall. @default 4 */
  k?: number;
  /** Recent turns kept word for word (never recalled twice). @default 3 */
  window?: number;
  /** The most messages kept embedded (the newest). @default 2000 */
  maxIndexed?: number;
  /** @default "vectors" */
  stateName?: string;
}

interface Indexed {
  /** The message's position in the session. */
  i: number;
  line: string;
  v: number[];
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * The recent window, plus the `k` earlier messages most similar to the input
 * (LangChain's VectorStoreRetrieverMemory, kept with the session). Each message is
 * embedded once, after its turn is saved; the vectors live in the session's state,
 * so they persist and are erased with it.
 */
export function vectorRecallMemory(options: VectorRecallMemoryOptions): MemoryStrategy {
  const k = options.k ?? 4;
  const window = options.window ?? 3;
  const maxIndexed = options.maxIndexed ?? 2000;
  if (!Number.isInteger(k) || k < 0) throw new MemoriaError("INVALID_ARGUMENT", `vectorRecallMemory: k must be a whole number >= 0, got ${k}.`);
  const name = options.stateName ?? "vectors";

  async function catchUp(context: MemoryLoadContext): Promise<Indexed[]> {
    const saved = (await context.state.get(name)) as { items?: Indexed[]; processed?: number } | undefined;
    const items = [...(saved?.items ?? [])];
    const processed = saved?.processed ?? 0;
    const { messages, total } = await unprocessed(context, processed, 500);
    if (messages.length === 0) return items;
    const first = total - messages.length;
    const fresh = messages
      .map((message, offset) => ({ i: first + offset, line: linesOf([message]), keep: ["human", "ai"].includes(message.getType()) && textOfMessages([message]).trim() !== "" }))
      .filter((item) => item.keep);
    const vectors = await options.embeddings.embedDocuments(fresh.map((item) => item.line));
    fresh.forEach((item, n) => {
      items.push({ i: item.i, line: item.line, v: (vectors[n] ?? []).map((x) => Math.round(x * 1e6) / 1e6) });
    });
    const kept = items.slice(-maxIndexed);
    await context.state.set(name, { items: kept as unknown as JsonValue, processed: total });
    return kept;
  }

  return {
    name: `vector-recall(k=${k}, window=${window})`,
    async load(context) {
      const items = await catchUp(context);
      const recent = await readLastTurns((o) => context.read(o), window);
      const windowStart = (await context.count()) - recent.length;
      const candidates = items.filter((item) => item.i < windowStart);
      const query = textOfMessages(context.input);
      if (k === 0 || candidates.length === 0 || !query.trim()) return recent;
      const q = await options.embeddings.embedQuery(query);
      const best = candidates
        .map((item) => ({ item, score: cosine(q, item.v) }))
        .filter(({ score }) => score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, k)
        .map(({ item }) => item)
        .sort((a, b) => a.i - b.i);
      return [...contextMessage("Earlier in this conversation:", best.map((item) => item.line)), ...recent];
    },
    async afterSave(context) {
      await catchUp(context);
    },
  };
}
