import { describe, expect, it } from "vitest";
import { sortedFew } from "../src/top-k.js";

describe("sortedFew (the small sort on a memory turn's path)", () => {
  it("orders as Array.prototype.sort does, equal items kept in their order, below and above its insertion bound", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const order = (a: { key: number }, b: { key: number }) => a.key - b.key;
    for (let length = 0; length <= 40; length++) {
      for (let round = 0; round < 20; round++) {
        const items = Array.from({ length }, (_, i) => ({ key: Math.floor(random() * 5), i }));
        const expected = [...items].sort(order);
        const sorted = sortedFew(items, order);
        expect(sorted).toBe(items); // in place
        expect(sorted).toEqual(expected);
      }
    }
  });
});
