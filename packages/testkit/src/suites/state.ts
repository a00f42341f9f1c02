import type { HistoryStore } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered, randomKey } from "../fixtures.js";
import { useStore, withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** Derived state of memory strategies: stored beside the messages, erased with them. */
export function stateSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: derived state`, () => {
    const store = useStore(setup);

    it("stores, replaces and reads back JSON values by name, per session", async () => {
      const key = randomKey();
      const other = randomKey();
      expect(await store().getState(key, "summary")).toBeUndefined();
      const value = { text: "Ada likes tea ☕", folded: 12, entities: { Ada: ["likes tea"] }, list: [1, null, true] };
      await store().setState(key, "summary", value);
      await store().setState(key, "summary.v2", "second");
      expect(await store().getState(key, "summary")).toEqual(value);
      await store().setState(key, "summary", { text: "replaced", folded: 20 });
      expect(await store().getState(key, "summary")).toEqual({ text: "replaced", folded: 20 });
      expect(await store().getState(key, "summary.v2")).toBe("second");
      expect(await store().getState(other, "summary")).toBeUndefined();
    });

    it("gives every state value of a session at once, by name", async () => {
      const key = randomKey();
      const all = store().getAllState;
      if (!all) throw new Error(`${store().name}: getAllState is missing`);
      expect(await all.call(store(), key)).toEqual({});
      await store().setState(key, "summary", { text: "Ada likes tea" });
      await store().setState(key, "entities.v2", ["Ada"]);
      await store().setInfo?.(key, { title: "not state" });
      const values = await all.call(store(), key);
      expect(values).toEqual({ "entities.v2": ["Ada"], summary: { text: "Ada likes tea" } });
      expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
      await store().clear(key);
      expect(await all.call(store(), key)).toEqual({});
    });

    it("gives a session with only state a count of 0 and no messages, and lists it", async () => {
      const key = { userId: `u-${crypto.randomUUID()}`, conversationId: "c" };
      await store().setState(key, "entities", {});
      expect(await store().count(key)).toBe(0);
      expect(await store().read(key)).toEqual([]);
      expect((await store().list({ userId: key.userId })).sessions).toEqual([key]);
      await store().append(key, numbered(2));
      expect(await store().count(key)).toBe(2);
      expect(await store().getState(key, "entities")).toEqual({});
    });

    it("erases state with clear and delete", async () => {
      const cleared = randomKey();
      await store().append(cleared, numbered(1));
      await store().setState(cleared, "summary", "x");
      await store().clear(cleared);
      expect(await store().getState(cleared, "summary")).toBeUndefined();
      const user = `u-${crypto.randomUUID()}`;
      await store().setState({ userId: user, conversationId: "a" }, "summary", "y");
      expect(await store().delete({ userId: user })).toBe(1);
      expect(await store().getState({ userId: user, conversationId: "a" }, "summary")).toBeUndefined();
    });

    it("returns copies, and refuses bad names and values that are not JSON", async () => {
      const key = randomKey();
      await store().setState(key, "s", { list: [1] });
      const copy = (await store().getState(key, "s")) as { list: number[] };
      copy.list.push(2);
      expect(await store().getState(key, "s")).toEqual({ list: [1] });
      for (const name of ["", "1abc", "a b", "x".repeat(65), "__proto__"]) {
        await expect(store().setState(key, name, 1)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      }
      await expect(store().setState(key, "when", new Date() as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(store().setState(key, "n", Number.NaN)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await store().getState(key, "when")).toBeUndefined();
    });

    const peer = setup.createPeer?.bind(setup);
    it.skipIf(!peer)(`is seen by another store instance over the same data${peer ? "" : " (skipped: no shared backend)"}`, async () => {
      const other = await peer!(store());
      await withStores([other], async () => {
        const key = randomKey();
        await store().setState(key, "summary", { text: "shared" });
        expect(await other.getState(key, "summary")).toEqual({ text: "shared" });
      });
    });

    const batched = (s: HistoryStore) => s.setStates.bind(s);
    it("writes several state values at once, replacing and adding, and writes none of them if one is bad", async () => {
      const setStates = batched(store());
      const key = randomKey();
      await store().setState(key, "summary", "old");
      await setStates(key, { summary: { text: "new" }, "entities.v2": ["Ada"] });
      expect(await store().getState(key, "summary")).toEqual({ text: "new" });
      expect(await store().getState(key, "entities.v2")).toEqual(["Ada"]);
      await expect(setStates(key, { summary: "lost", "1 not a name": 1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(setStates(key, { summary: "lost", when: new Date() as never })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(setStates(key, ["summary", "lost"] as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await store().getState(key, "summary")).toEqual({ text: "new" });
      // A new session made by a batch alone: listed by its key fields, with no messages.
      const fresh = { userId: `u-${crypto.randomUUID()}`, conversationId: "only-state" };
      await setStates(fresh, { summary: "s", entities: [] });
      expect((await store().list({ userId: fresh.userId })).sessions).toEqual([fresh]);
      expect(await store().count(fresh)).toBe(0);
      const untouched = randomKey();
      await setStates(untouched, {}); // nothing to write: no session either
      expect(await store().count(untouched)).toBe(0);
      expect(await store().getState(untouched, "summary")).toBeUndefined();
    });

    it("refuses a batch of state values under a lock another holder has, and writes none of them", async () => {
      const setStates = batched(store());
      const key = randomKey();
      const held = await store().lock(key, { ttlMs: 10_000 });
      try {
        const stale = { token: "a-holder-that-lost-the-lock", lost: true, release: async () => {} };
        await expect(setStates(key, { summary: "late", entities: [] }, { lock: stale })).rejects.toMatchObject({ code: "LOCK_LOST" });
        expect(await store().getState(key, "summary")).toBeUndefined();
        expect(await store().getState(key, "entities")).toBeUndefined();
        await setStates(key, { summary: "held", entities: ["Ada"] }, { lock: held });
        expect(await store().getState(key, "entities")).toEqual(["Ada"]);
      } finally {
        await held.release();
      }
    });

    it("a rejected state write creates no session: nothing is listed and nothing is counted", async () => {
      const key = { userId: `u-${crypto.randomUUID()}`, conversationId: "c" };
      await expect(store().setState(key, "1 not a name", "x")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(store().setState(key, "ok", (() => "not json") as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect((await store().list({ userId: key.userId })).sessions).toEqual([]);
      expect(await store().count(key)).toBe(0);
    });
  });
}
