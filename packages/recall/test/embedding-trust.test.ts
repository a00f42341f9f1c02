import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { describe, expect, it } from "vitest";
import { TRUST_PROBES, embeddingTrust } from "../src/embedding-trust.js";
import { HashingEmbeddings } from "../src/hashing-embeddings.js";
import { contentWords } from "../src/lexical-terms.js";

/** Hashing embeddings given as a real model is (no `lexicalOnly`): words, no meaning. */
function hashedWords(dimensions: number): EmbeddingsInterface {
  const hashing = new HashingEmbeddings({ dimensions });
  return { embedDocuments: (texts) => hashing.embedDocuments(texts), embedQuery: (text) => hashing.embedQuery(text) };
}

/**
 * An embedding that reads the meaning of the first `knows` probes (each probe's
 * question and answer share a direction, its decoys point elsewhere) and hashes the
 * words of every other text.
 */
function knowing(knows: number): EmbeddingsInterface & { calls: number } {
  const words = new HashingEmbeddings({ dimensions: 64 });
  const vector = (text: string) => {
    const p = TRUST_PROBES.findIndex((probe) => probe.question === text || probe.answer === text);
    if (p < 0 || p >= knows) return words.vector(text);
    return Array.from({ length: 64 }, (_, i) => (i === p ? 1 : 0));
  };
  return {
    calls: 0,
    async embedDocuments(texts) {
      this.calls++;
      return texts.map(vector);
    },
    async embedQuery(text) {
      this.calls++;
      return vector(text);
    },
  };
}

describe("embeddingTrust", () => {
  it("each probe's answer shares no word with its question, and each decoy shares one", () => {
    for (const probe of TRUST_PROBES) {
      const asked = new Set(contentWords(probe.question));
      expect(
        contentWords(probe.answer).filter((word) => asked.has(word)),
        probe.answer,
      ).toEqual([]);
      for (const decoy of probe.decoys)
        expect(
          contentWords(decoy).some((word) => asked.has(word)),
          decoy,
        ).toBe(true);
    }
  });

  it("gives embeddings that only hash words no weight, at any size", async () => {
    for (const dimensions of [16, 32, 256, 1024]) expect(await embeddingTrust(hashedWords(dimensions))).toBe(0);
  });

  it("weighs an embedding by the share of probes it passes: none at 40 %, half at 60 %, all from 80 %", async () => {
    const weights = await Promise.all([0, 4, 5, 6, 8, 10].map((knows) => embeddingTrust(knowing(knows))));
    expect(weights.map((w) => Number(w.toFixed(6)))).toEqual([0, 0, 0.25, 0.5, 1, 1]);
  });

  it("checks each embeddings object once, and again after a check that failed", async () => {
    const embeddings = knowing(10);
    expect(await Promise.all([embeddingTrust(embeddings), embeddingTrust(embeddings)])).toEqual([1, 1]);
    const calls = embeddings.calls;
    expect(await embeddingTrust(embeddings)).toBe(1);
    expect(embeddings.calls).toBe(calls);

    let down = true;
    const flaky: EmbeddingsInterface = {
      embedDocuments: async (texts) => {
        if (down) throw new Error("embeddings server down");
        return embeddings.embedDocuments(texts);
      },
      embedQuery: (text) => embeddings.embedQuery(text),
    };
    await expect(embeddingTrust(flaky)).rejects.toThrow("embeddings server down");
    down = false;
    expect(await embeddingTrust(flaky)).toBe(1);
  });
});
