import { Embeddings } from "@langchain/core/embeddings";
import { contentWords } from "./lexical-terms.js";

function fnv1a(text: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Offline, deterministic embeddings: the words of a text hashed into `dimensions`
 * buckets (with signs), normalized. Texts sharing words score high: lexical
 * similarity, not meaning (no word weighs more for being rare: recall's lexical
 * index does that). For tests, examples and demos without a network; use a
 * real embedding model (OpenAIEmbeddings, …) in production.
 */
export class HashingEmbeddings extends Embeddings {
  readonly dimensions: number;
  /** Its vectors hold words, not meaning: recall memory ranks them below its lexical index (see `recallMemory`'s `weights`). */
  readonly lexicalOnly = true;

  constructor(fields: { dimensions?: number } = {}) {
    super({});
    this.dimensions = fields.dimensions ?? 256;
  }

  vector(text: string): number[] {
    const v = new Array<number>(this.dimensions).fill(0);
    for (const stem of contentWords(text)) {
      const bucket = fnv1a(stem, 0) % this.dimensions;
      v[bucket] = (v[bucket] as number) + (fnv1a(stem, 1) & 1 ? 1 : -1);
    }
    const norm = Math.hypot(...v) || 1;
    return v.map((x) => x / norm);
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.vector(text));
  }

  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }
}
