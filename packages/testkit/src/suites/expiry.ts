import type { HistoryStore } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered, randomKey, transcript } from "../fixtures.js";
import { withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sessions expire `ttlSeconds` after their last append. */
export function expirySuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: expiry`, () => {
    const withTtl = setup.createStoreWithTtl?.bind(setup);
    it.skipIf(!withTtl)(`expires a session after its TTL and renews the TTL on append${withTtl ? "" : " (skipped: no createStoreWithTtl)"}`, async () => {
      // A stall (a loaded CI machine) can only delay a step, so the margins that
      // matter are the two deadlines: the renewal before `renewed` expires, and the
      // final check before its renewed TTL ends. Both are about 0.95 s.
      const store: HistoryStore = await withTtl!(2);
      expect(store.capabilities.ttl).toBe(true);
      await withStores([store], async () => {
        const fading = randomKey();
        const renewed = randomKey();
        await store.append(fading, numbered(2), { turnId: "first" });
        await store.setState(fading, "summary", "fades too");
        await store.append(renewed, numbered(1));
        await sleep(1_050);
        await store.append(renewed, numbered(1, 1));
        await sleep(1_050);
        // 2.1 s after its only append, `fading` is gone; `renewed` was appended 1.05 s ago.
        expect(await store.read(fading)).toEqual([]);
        expect(await store.count(fading)).toBe(0);
        expect(await store.getState(fading, "summary")).toBeUndefined();
        expect(await store.count(renewed)).toBe(2);
        expect((await store.list({ sessionId: fading.sessionId as string })).sessions).toEqual([]);
        // Appending again starts afresh: nothing of the old session, not even its turn ids.
        expect(await store.append(fading, numbered(1, 7), { turnId: "first" })).toEqual({ appended: true });
        expect(transcript(await store.read(fading))).toEqual(["human: m7"]);
        expect(await store.count(fading)).toBe(1);
        expect(await store.getState(fading, "summary")).toBeUndefined();
      });
    });

    it.skipIf(!withTtl)("prunes the expired sessions where the store has prune(), and keeps the live ones", async (context) => {
      const store: HistoryStore = await withTtl!(1);
      await withStores([store], async () => {
        if (!store.capabilities.prune) return context.skip(`the ${store.name} store expires sessions by itself (capabilities.prune is false)`);
        const gone = randomKey();
        const live = randomKey();
        await store.append(gone, numbered(2));
        await store.setState(gone, "summary", "goes too");
        await sleep(1_100);
        await store.append(live, numbered(2)); // a second to live
        expect(await store.prune()).toBeGreaterThanOrEqual(1);
        expect(await store.prune()).toBe(0); // nothing expired is left
        expect(await store.count(live)).toBe(2);
        expect(await store.read(gone)).toEqual([]);
      });
    });
  });
}
