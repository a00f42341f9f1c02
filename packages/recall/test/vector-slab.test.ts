import { describe, expect, it } from "vitest";
import { compileVectorScan, vectorScanSource } from "../scripts/build-wasm.mjs";
import { HeldRecallItems } from "../src/held-recall-items.js";
import { dotProduct, unitVector } from "../src/vectors.js";
import { VectorSlab } from "../src/vector-slab.js";
import { VECTOR_SCAN_WASM } from "../src/vector-scan-wasm.js";
import { readFileSync } from "node:fs";

/** Deterministic floats in [-1, 1). */
function floats(seed: number, length: number): Float32Array {
  let x = seed * 2654435761;
  return Float32Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 1073741824 - 1;
  });
}

describe("the vector scan's module", () => {
  it("is the one its WebAssembly text compiles to", async () => {
    const bytes = await compileVectorScan();
    expect(VECTOR_SCAN_WASM).toBe(bytes.toString("base64"));
    expect(readFileSync(new URL("../src/vector-scan-wasm.ts", import.meta.url), "utf8")).toBe(vectorScanSource(bytes));
    expect((globalThis as unknown as { WebAssembly: { validate(b: Uint8Array): boolean } }).WebAssembly.validate(bytes)).toBe(true); // Node 20 has SIMD: the tests below run the module
  });
});

for (const wasm of [true, false]) {
  describe(`VectorSlab (${wasm ? "WebAssembly" : "JavaScript"})`, () => {
    it("scores every slot as dotProduct does, through growth, removal, reuse and a wider vector", () => {
      const slab = new VectorSlab({ wasm });
      const held = new Map<number, Float32Array>();
      const lengths = [3, 16, 17, 31, 256];
      for (let i = 0; i < 300; i++) held.set(slab.add(floats(i, lengths[i % lengths.length] as number)), floats(i, lengths[i % lengths.length] as number));
      for (let slot = 0; slot < 300; slot += 7) {
        slab.remove(slot);
        held.delete(slot);
        expect(Array.from(slab.read(slot, 256))).toEqual(new Array(256).fill(0));
      }
      for (let i = 0; i < 20; i++) {
        const vector = floats(1000 + i, 300); // wider than any row so far: every row re-laid
        held.set(slab.add(vector), vector);
      }
      slab.set(1, floats(5, 8));
      held.set(1, floats(5, 8));
      for (const query of [floats(7, 256), floats(8, 3), floats(9, 400), floats(10, 300)]) {
        const scores = slab.scores(query);
        expect(scores.length).toBe(slab.slots);
        for (const [slot, vector] of held) expect(scores[slot]).toBeCloseTo(dotProduct(vector, query), 3);
      }
      for (const [slot, vector] of held) expect(Array.from(slab.read(slot, vector.length))).toEqual(Array.from(vector));
    });

    it("holds a few vectors in what they take, not a page of WebAssembly memory", () => {
      const slab = new VectorSlab({ wasm });
      for (let i = 0; i < 5; i++) slab.add(floats(i, 256));
      expect(slab.bytes).toBeLessThan(16 * 1024);
      for (let i = 0; i < 200; i++) slab.add(floats(i, 256));
      expect(slab.bytes).toBeGreaterThan(200 * 256 * 4);
      expect(slab.scores(floats(3, 256))[3]).toBeCloseTo(dotProduct(floats(3, 256), floats(3, 256)), 2);
    });

    it("scores nothing when it holds nothing", () => {
      expect(new VectorSlab({ wasm }).scores(floats(1, 4))).toEqual(new Float32Array(0));
    });
  });
}

describe("HeldRecallItems.nearest", () => {
  it("finds what an exact scan of the items finds, in that order, after replacements and deletions", () => {
    const items = new HeldRecallItems();
    const reference = new Map<string, { session: string; position: number; at: number; vector: Float32Array }>();
    for (let i = 0; i < 500; i++) {
      const item = { session: `s${i % 40}`, position: Math.floor(i / 40), at: i, vector: unitVector(Array.from(floats(i, 24))) };
      items.set(item);
      reference.set(`${item.session}/${item.position}`, item);
    }
    for (let i = 0; i < 500; i += 9) {
      const item = { session: `s${i % 40}`, position: Math.floor(i / 40), at: i };
      if (i % 2) {
        items.delete(item);
        reference.delete(`${item.session}/${item.position}`);
      } else {
        const replaced = { ...item, vector: unitVector(Array.from(floats(i + 7000, 24))) };
        items.set(replaced);
        reference.set(`${item.session}/${item.position}`, replaced);
      }
    }
    expect(items.size).toBe(reference.size);
    for (let q = 0; q < 10; q++) {
      const query = Array.from(floats(9000 + q, 24));
      const unit = unitVector(query);
      const expected = [...reference.values()].map((item) => ({ item, score: dotProduct(item.vector, unit) })).sort((a, b) => b.score - a.score);
      const found = items.nearest(query, 10);
      expect(found.map((hit) => `${hit.session}/${hit.position}`)).toEqual(expected.slice(0, 10).map(({ item }) => `${item.session}/${item.position}`));
      for (const [i, hit] of found.entries()) expect(hit.score).toBeCloseTo(expected[i]?.score as number, 5);
    }
    expect(items.nearest([1, 0], 0)).toEqual([]);
    const byPlace = (a: { session: string; position: number }, b: { session: string; position: number }) =>
      `${a.session}/${a.position}`.localeCompare(`${b.session}/${b.position}`);
    expect(items.places().sort(byPlace)).toEqual([...reference.values()].map(({ session, position, at }) => ({ session, position, at })).sort(byPlace));
    expect(items.items().sort(byPlace)).toEqual([...reference.values()].sort(byPlace));
  });
});
