import { describe, expect, it } from "vitest";
import { liftByNeighbours } from "../src/neighbour-lift.js";

const hit = (session: string, position: number, score: number) => ({ session, position, at: 0, score });

describe("liftByNeighbours", () => {
  it("lifts a hit by a share of its better neighbour's score, and ranks again", () => {
    const hits = [hit("a", 4, 3), hit("b", 9, 2), hit("a", 5, 2), hit("c", 1, 1), hit("a", 3, 0.5)];
    const lifted = liftByNeighbours(hits, 0.5);
    // a#5 follows a#4 (3): 2 + 1.5; a#4 has a#3 (0.5) and a#5 (2) beside it: 3 + 1; b#9 and c#1 have no neighbour among the hits.
    expect(lifted.map(({ session, position, score }) => [`${session}#${position}`, score])).toEqual([
      ["a#4", 4],
      ["a#5", 3.5],
      ["b#9", 2], // equal scores in the index's order: the later session's first
      ["a#3", 2],
      ["c#1", 1],
    ]);
  });

  it("leaves the ranking as it was at weight 0, and neighbours in other conversations count for nothing", () => {
    const hits = [hit("a", 1, 2), hit("b", 2, 1)];
    expect(liftByNeighbours(hits, 0)).toEqual(hits);
    expect(liftByNeighbours([hit("a", 1, 2), hit("b", 2, 1), hit("c", 2, 1)], 1).map((h) => h.score)).toEqual([2, 1, 1]);
  });
});
