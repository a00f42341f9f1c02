import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { numbered, randomKey, transcript } from "../fixtures.js";
import { useStore, withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** Atomic appends, exactly-once turn ids, and concurrent writers. */
export function appendsSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: appends`, () => {
    const store = useStore(setup);

    it("appends all of a turn or none of it", async () => {
      const key = randomKey();
      await store().append(key, numbered(2));
      const bad = new HumanMessage({ content: "bad", additional_kwargs: { when: new Date() } });
      await expect(store().append(key, [...numbered(2, 2), bad])).rejects.toMatchObject({ code: "INVALID_MESSAGE" });
      expect(transcript(await store().read(key))).toEqual(["human: m0", "human: m1"]);
    });

    it("stores a retried append with the same turn id once", async () => {
      const key = randomKey();
      expect(await store().append(key, numbered(2), { turnId: "turn-1" })).toEqual({ appended: true });
      expect(await store().append(key, numbered(2), { turnId: "turn-1" })).toEqual({ appended: false });
      expect(await store().append(key, numbered(1, 2), { turnId: "turn-2" })).toEqual({ appended: true });
      expect(await store().count(key)).toBe(3);
    });

    it("scopes turn ids to their session", async () => {
      const a = randomKey();
      const b = randomKey();
      await store().append(a, numbered(1), { turnId: "same" });
      expect(await store().append(b, numbered(1), { turnId: "same" })).toEqual({ appended: true });
      expect(await store().count(b)).toBe(1);
    });

    it("stores each of 100 concurrent retried appends exactly once", async () => {
      const key = randomKey();
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          Promise.all([
            store().append(key, [new HumanMessage(`q${i}`), new HumanMessage(`a${i}`)], { turnId: `t${i}` }),
            store().append(key, [new HumanMessage(`q${i}`), new HumanMessage(`a${i}`)], { turnId: `t${i}` }),
          ]),
        ),
      );
      const stored = (await store().read(key)).map((m) => String(m.content));
      expect(stored).toHaveLength(200);
      // Each turn's two messages sit together, and no turn appears twice.
      for (let i = 0; i < 200; i += 2) expect(stored[i + 1]).toBe(stored[i]!.replace("q", "a"));
      expect(new Set(stored).size).toBe(200);
    });

    it("refuses an append that is not a list of messages, writing nothing", async () => {
      const key = randomKey();
      await expect(store().append(key, "hello" as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(store().append(key, [{ role: "user", content: "x" }] as never)).rejects.toMatchObject({ code: "INVALID_MESSAGE" });
      expect(await store().count(key)).toBe(0);
    });

    it("accepts an empty append as a no-op", async () => {
      const key = randomKey();
      await store().append(key, []);
      expect(await store().count(key)).toBe(0);
    });

    it(`keeps windowed reads and appends working on a large session`, async () => {
      const key = randomKey();
      const size = setup.largeSessionSize ?? 2_000;
      for (let from = 0; from < size; from += 500) await store().append(key, numbered(Math.min(500, size - from), from));
      await store().append(key, numbered(1, size));
      expect(await store().count(key)).toBe(size + 1);
      expect(transcript(await store().read(key, { last: 2 }))).toEqual([`human: m${size - 1}`, `human: m${size}`]);
    });

    const peer = setup.createPeer?.bind(setup);
    it.skipIf(!peer)(
      `two store instances over the same backend race without losing or duplicating anything${peer ? "" : " (skipped: no shared backend)"}`,
      async () => {
        const other = await peer!(store());
        await withStores([other], async () => {
          const key = randomKey();
          await Promise.all(
            Array.from({ length: 40 }, (_, i) => {
              const writer = i % 2 === 0 ? store() : other;
              return writer.append(key, [new HumanMessage(`q${i}`), new HumanMessage(`a${i}`)], { turnId: `t${i % 20}` });
            }),
          );
          const stored = (await other.read(key)).map((m) => String(m.content));
          expect(stored).toHaveLength(40);
          for (let i = 0; i < 40; i += 2) expect(stored[i + 1]).toBe(stored[i]!.replace("q", "a"));
          expect(await store().count(key)).toBe(40);
        });
      },
    );
  });
}
