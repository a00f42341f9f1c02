import { describe, expect, it } from "vitest";
import { randomId } from "../src/random-id.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("randomId", () => {
  it("is a version 4 UUID of the RFC's variant, after its prefix", () => {
    for (let i = 0; i < 1000; i++) expect(randomId()).toMatch(UUID_V4);
    const id = randomId("run-");
    expect(id.startsWith("run-")).toBe(true);
    expect(id.slice(4)).toMatch(UUID_V4);
  });

  it("keeps a prefix longer than its scratch buffer whole", () => {
    const prefix = "p".repeat(200);
    const id = randomId(prefix);
    expect(id.slice(0, 200)).toBe(prefix);
    expect(id.slice(200)).toMatch(UUID_V4);
    // and the next short id is still written from the start
    expect(randomId("e.")).toMatch(/^e\.[0-9a-f]{8}-/);
  });

  it("never repeats, across many refills of its pool of random bytes", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20_000; i++) ids.add(randomId());
    expect(ids.size).toBe(20_000);
  });

  it("draws every random digit from all sixteen values, evenly", () => {
    const counts = Array.from({ length: 36 }, () => new Map<string, number>());
    const n = 16_000;
    for (let i = 0; i < n; i++) {
      const id = randomId();
      for (let at = 0; at < 36; at++) counts[at]?.set(id[at] as string, (counts[at]?.get(id[at] as string) ?? 0) + 1);
    }
    const fixed = new Set([8, 13, 14, 18, 23]); // dashes, the version digit
    for (let at = 0; at < 36; at++) {
      if (fixed.has(at)) continue;
      const seen = counts[at] as Map<string, number>;
      if (at === 19) {
        expect([...seen.keys()].sort()).toEqual(["8", "9", "a", "b"]);
        continue;
      }
      expect(seen.size).toBe(16);
      // 1,000 expected per digit; 800 is more than six standard deviations below
      for (const count of seen.values()) expect(count).toBeGreaterThan(800);
    }
  });
});
