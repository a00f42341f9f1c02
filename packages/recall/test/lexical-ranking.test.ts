import { describe, expect, it } from "vitest";
import { TermIndex, termCounts, termScore, termWeight } from "../src/lexical-ranking.js";
import type { QueryTerm } from "@memoria/core";

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words from very common (w0, in most items) to rare (w40 and up, in a few). */
const word = (next: () => number) => `w${Math.floor(60 * next() ** 2.5)}`;

interface Item {
  id: number;
  terms: string[];
}

/**
 * BM25 over every item, each query word's best form, summed in the query's order
 * (as the SQL index sums them), then the best k by score and `tie`: what the index
 * must return, whatever postings it skipped.
 */
function exhaustive(items: Item[], query: (string | QueryTerm)[], k: number): { value: number; score: number }[] {
  const holding = new Map<string, number>();
  let total = 0;
  for (const item of items) {
    total += item.terms.length;
    for (const term of termCounts(item.terms).keys()) holding.set(term, (holding.get(term) ?? 0) + 1);
  }
  const average = total / (items.length || 1);
  const seen = new Set<string>();
  const words: { forms: { term: string; idf: number }[] }[] = [];
  for (const entry of query) {
    const { term, alternatives = [] } = typeof entry === "string" ? { term: entry } : entry;
    if (seen.has(term)) continue;
    seen.add(term);
    const forms = [{ term, weight: 1 }, ...alternatives.filter((alternative) => alternative.weight > 0 && alternative.term !== term)];
    const held = forms.flatMap(({ term: form, weight }) =>
      holding.has(form) ? [{ term: form, idf: weight * termWeight(items.length, holding.get(form) as number) }] : [],
    );
    words.push({ forms: held });
  }
  const scored = items.flatMap((item) => {
    const counts = termCounts(item.terms);
    let score = 0;
    let matched = false;
    for (const { forms } of words) {
      const shares = forms.flatMap(({ term, idf }) => (counts.has(term) ? [termScore(idf, counts.get(term) as number, item.terms.length, average)] : []));
      if (shares.length === 0) continue;
      matched = true;
      score += Math.max(...shares);
    }
    return matched ? [{ value: item.id, score }] : [];
  });
  return scored.sort((a, b) => b.score - a.score || b.value - a.value).slice(0, k);
}

describe("TermIndex (BM25 in the process)", () => {
  it("returns exactly the exhaustive ranking, though it stops walking common words once they cannot change the top k", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const index = new TermIndex<number>();
      const items: Item[] = [];
      for (let id = 0; id < 400; id++) {
        // Every tenth item repeats an earlier one: equal scores, ordered by `tie`.
        const terms =
          id % 10 === 9 ? [...(items[Math.floor(next() * items.length)] as Item).terms] : Array.from({ length: 1 + Math.floor(next() * 12) }, () => word(next));
        items.push({ id, terms });
        index.set(String(id), id, terms);
      }
      // Some items replaced and taken out, as a scope changes.
      for (let n = 0; n < 20; n++) {
        const id = Math.floor(next() * items.length);
        const terms = Array.from({ length: 1 + Math.floor(next() * 6) }, () => word(next));
        (items[id] as Item).terms = terms;
        index.set(String(id), id, terms);
      }
      const gone = new Set(Array.from({ length: 10 }, () => Math.floor(next() * items.length)));
      for (const id of gone) index.delete(String(id));
      // New items take the slots of those taken out: nothing of the old ones may count for them.
      for (let id = 400; id < 405; id++) {
        const terms = Array.from({ length: 1 + Math.floor(next() * 8) }, () => word(next));
        items.push({ id, terms });
        index.set(String(id), id, terms);
      }
      const kept = items.filter((item) => !gone.has(item.id));
      for (let q = 0; q < 25; q++) {
        const query: (string | QueryTerm)[] = Array.from({ length: 1 + Math.floor(next() * 5) }, () =>
          next() < 0.2 ? { term: word(next), alternatives: [{ term: word(next), weight: 0.5 }] } : word(next),
        );
        const ranked = exhaustive(kept, query, 50);
        for (const k of [1, 3, 10, 50]) {
          const found = index.search(query, k, (a, b) => b - a);
          expect(found, `seed ${seed}, query ${JSON.stringify(query)}, k ${k}`).toEqual(ranked.slice(0, k));
        }
      }
    }
  }, 120_000); // CPU-bound: a loaded CI machine runs it several times slower than an idle one

  it("finds an item that holds only common words when no rare word can fill the top k", () => {
    const index = new TermIndex<string>();
    for (let i = 0; i < 200; i++) index.set(`common${i}`, `common${i}`, ["the", "meeting", ...(i % 2 ? ["moved"] : [])]);
    index.set("rare", "rare", ["zanzibar"]);
    const found = index.search(["zanzibar", "meeting", "moved"], 3, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(found.map((hit) => hit.value)).toEqual(["rare", "common1", "common101"]);
    expect(index.search(["zanzibar"], 0, () => 0)).toEqual([]);
  });
});
