import { createHash } from "node:crypto";
import { MemoriaError, type RecallHit, type RecallIndex, type RecallItem, type RecallSelector } from "@memoria/core";
import { checkRecallK, checkRecallSelector } from "./index-checks.js";
import { placeId } from "./recall-place.js";

/** The parts of a LangChain `VectorStore` the adapter uses. */
export interface VectorStoreLike {
  addVectors(vectors: number[][], documents: { pageContent: string; metadata: Record<string, unknown> }[], options?: { ids?: string[] }): Promise<unknown>;
  similaritySearchVectorWithScore(query: number[], k: number, filter?: unknown): Promise<[{ metadata: Record<string, unknown> }, number][]>;
}

export interface VectorStoreIndexOptions {
  /**
   * The store's filter that keeps one scope's documents. Filters are each store's
   * own: an object for PGVector, Chroma or Redis, a function for MemoryVectorStore.
   * @default (scope) => ({ memoriaScope: scope })
   */
  filter?: (scope: string) => unknown;
  /** What the store's scores mean: cosine `"similarity"` (higher is nearer) or `"distance"` (lower is nearer). @default "similarity" */
  score?: "similarity" | "distance";
  /**
   * Removes documents (retention, `forget`): stores differ in how they delete by
   * metadata, so the app says how. Without it, `remove` is refused.
   */
  remove?: (selector: RecallSelector) => Promise<number>;
}

/** A stable id for an item, formatted as a UUID (some stores accept no other ids): adding an item twice replaces it. */
export function itemId(item: Pick<RecallItem, "scope" | "session" | "position">): string {
  const hex = createHash("sha256").update(`${item.scope}\u0000${item.session}\u0000${item.position}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Recall memory's index on a LangChain `VectorStore` the app already runs (PGVector,
 * Redis, Chroma, …). Documents carry no text: their metadata names the scope,
 * session, position and time, and their ids are derived from those, so a repeated
 * batch replaces rather than adds (where the store honours ids).
 */
export function vectorStoreIndex(vectorStore: VectorStoreLike, options: VectorStoreIndexOptions = {}): RecallIndex {
  const filter = options.filter ?? ((scope: string) => ({ memoriaScope: scope }));
  return {
    name: "vector-store",
    async upsert(items: readonly RecallItem[]) {
      if (items.length === 0) return;
      await vectorStore.addVectors(
        items.map((item) => [...item.vector]),
        items.map((item) => ({ pageContent: "", metadata: { memoriaScope: item.scope, session: item.session, position: item.position, at: item.at } })),
        { ids: items.map(itemId) },
      );
    },
    async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      if (k === 0) return [];
      const found = await vectorStore.similaritySearchVectorWithScore([...vector], k, filter(scope));
      const seen = new Set<string>();
      const hits: RecallHit[] = [];
      for (const [document, score] of found) {
        const { memoriaScope, session, position, at } = document.metadata;
        if (memoriaScope !== scope || typeof session !== "string" || typeof position !== "number") continue;
        const id = placeId(session, position);
        if (seen.has(id)) continue; // a store that ignores ids may hold a repeated batch twice
        seen.add(id);
        hits.push({ session, position, at: typeof at === "number" ? at : 0, score: options.score === "distance" ? 1 - score : score });
      }
      return hits;
    },
    async remove(selector: RecallSelector): Promise<number> {
      checkRecallSelector(selector);
      if (!options.remove) {
        throw new MemoriaError(
          "INVALID_ARGUMENT",
          "vectorStoreIndex: removing needs the `remove` option (how this vector store deletes documents by metadata).",
        );
      }
      return options.remove(selector);
    },
  };
}
