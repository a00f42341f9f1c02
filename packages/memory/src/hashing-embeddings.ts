import { Embeddings } from "@langchain/core/embeddings";

const STOP = new Set("a an and are as at be but by do for from has have i in is it its me my of on or so that the this to was we what when where which who why will with you your".split(" "));

/** A text's content words, lowercased and lightly stemmed ("visited" and "visits" → "visit"); stop words left out. */
export function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !STOP.has(word)).map((word) => (word.length > 4 ? word.replace(/(ing|ed|es|s)$/, "") : word));
}

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
 * similarity, not meaning. For tests, examples and demos without a network; use a
 * real embedding model (OpenAIEmbeddings, …) in production.
 */
export class HashingEmbeddings extends Embeddings {
  readonly dimensions: number;

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
