import { describe, expect, it } from "vitest";
import { numbered, randomKey, transcript } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** `trim`: removing a session's oldest messages, for stores that can compact. */
export function compactionSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: compaction`, () => {
    const store = useStore(setup);

    it("removes the oldest messages; reads, windows and counts agree afterwards (skipped where the store cannot trim)", async (context) => {
      if (!store().capabilities.trim) return context.skip("capabilities.trim is false");
      const key = randomKey();
      await store().append(key, numbered(2), { turnId: "t0" });
      await store().append(key, numbered(3, 2), { turnId: "t1" });
      expect(await store().trim(key, { oldest: 3 })).toBe(3);
      expect(transcript(await store().read(key))).toEqual(["human: m3", "human: m4"]);
      expect(transcript(await store().read(key, { last: 1 }))).toEqual(["human: m4"]);
      expect(await store().count(key)).toBe(2);
      await store().append(key, numbered(1, 5), { turnId: "t2" });
      expect(transcript(await store().read(key))).toEqual(["human: m3", "human: m4", "human: m5"]);
      // Turn ids outlive their messages: a retried old turn is still refused.
      expect(await store().append(key, numbered(2), { turnId: "t0" })).toEqual({ appended: false });
      expect(await store().trim(key, { oldest: 100 })).toBe(3);
      expect(await store().count(key)).toBe(0);
      expect(await store().trim(randomKey(), { oldest: 5 })).toBe(0);
      await expect(store().trim(key, { oldest: -1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });
}
