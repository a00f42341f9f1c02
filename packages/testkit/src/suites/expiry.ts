import type { HistoryStore } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered, randomKey } from "../fixtures.js";
import { withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sessions expire `ttlSeconds` after their last append. */
export function expirySuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: expiry`, () => {
    const withTtl = setup.createStoreWithTtl?.bind(setup);
    it.skipIf(!withTtl)(`expires a session after its TTL and renews the TTL on append${withTtl ? "" : " (skipped: no createStoreWithTtl)"}`, async () => {
      const store: HistoryStore = await withTtl!(1);
      expect(store.capabilities.ttl).toBe(true);
      await withStores([store], async () => {
        const fading = randomKey();
        const renewed = randomKey();
        await store.append(fading, numbered(2));
        await store.setState(fading, "summary", "fades too");
        await store.append(renewed, numbered(1));
        await sleep(600);
        await store.append(renewed, numbered(1, 1));
        await sleep(700);
        // 1.3 s after its only append, `fading` is gone; `renewed` was appended 0.7 s ago.
        expect(await store.read(fading)).toEqual([]);
        expect(await store.count(fading)).toBe(0);
        expect(await store.getState(fading, "summary")).toBeUndefined();
        expect(await store.count(renewed)).toBe(2);
        expect((await store.list({ sessionId: fading.sessionId as string })).sessions).toEqual([]);
      });
    });
  });
}
