import type { RecallHit } from "@memoria/core";
import { placeId } from "./recall-place.js";

/** A ranking of hits, best first, and how much it counts in the fusion. */
export interface RankedList {
  hits: readonly RecallHit[];
  weight: number;
}

/** Reciprocal rank fusion's damping: the usual 60, so the top few ranks of one list do not drown the other. */
const RRF_K = 60;

/**
 * Weighted reciprocal rank fusion: a hit scores the sum over the lists that hold it
 * of weight / (60 + rank). Ranks, not scores, are added, so a cosine and a BM25
 * score never need to be put on one scale. The best `k`, best first; ties go to
 * the later message (the newer said).
 */
export function fuseRankings(lists: readonly RankedList[], k: number): RecallHit[] {
  const fused = new Map<string, RecallHit>();
  for (const { hits, weight } of lists) {
    hits.forEach((hit, rank) => {
      const id = placeId(hit.session, hit.position);
      const score = weight / (RRF_K + rank + 1);
      const held = fused.get(id);
      if (held) held.score += score;
      else fused.set(id, { ...hit, score });
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || b.at - a.at || b.position - a.position).slice(0, k);
}
