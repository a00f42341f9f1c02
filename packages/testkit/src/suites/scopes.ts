import { type HistoryStore, SCOPE_FIELD, type SessionKeyFilter, scopeKeyOf } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

async function listAll(store: HistoryStore, filter: SessionKeyFilter): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(filter, { limit: 2, cursor });
    found.push(...page.sessions.map((key) => JSON.stringify(Object.entries(key).sort())));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

/**
 * Scope records: long-term memory addressed by a partial key (`{ userId }`), kept
 * as an ordinary record of the store, hidden from conversation listings, and
 * erased with the user.
 */
export function scopesSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: scopes (long-term memory by partial key)`, () => {
    const store = useStore(setup);
    const user = () => ({ userId: `u-${crypto.randomUUID()}` });

    it("keeps state under a scope's key, apart from each conversation's", async () => {
      const scope = user();
      await store().append({ ...scope, conversationId: "c1" }, numbered(2));
      await store().setState(scopeKeyOf(scope), "facts", { facts: ["Ada lives in Paris"], cursors: { c1: 2 } });
      await store().setState({ ...scope, conversationId: "c1" }, "facts", "per conversation");
      expect(await store().getState(scopeKeyOf(scope), "facts")).toEqual({ facts: ["Ada lives in Paris"], cursors: { c1: 2 } });
      expect(await store().getState({ ...scope, conversationId: "c1" }, "facts")).toBe("per conversation");
      expect(await store().count(scopeKeyOf(scope))).toBe(0);
      expect(scopeKeyOf(scope)).toEqual({ ...scope, [SCOPE_FIELD]: "userId" });
    });

    it("leaves scope records out of list and recent, unless the filter names the scope field", async () => {
      const scope = user();
      for (const conversationId of ["c1", "c2", "c3"]) await store().append({ ...scope, conversationId }, numbered(1));
      await store().setState(scopeKeyOf(scope), "profile", "likes tea");
      await store().setState(scopeKeyOf({ ...scope, team: "blue" }), "profile", "team record");
      const listed = await listAll(store(), scope);
      expect(listed).toHaveLength(3);
      expect(listed.join()).not.toContain(SCOPE_FIELD);
      const recent = store().recent;
      if (!recent) throw new Error(`${store().name}: recent is missing`);
      expect((await recent.call(store(), scope, { limit: 10 })).sessions.map((info) => info.key.conversationId).sort()).toEqual(["c1", "c2", "c3"]);
      const scopes = await listAll(store(), { ...scope, [SCOPE_FIELD]: "userId" });
      expect(scopes).toEqual([JSON.stringify(Object.entries(scopeKeyOf(scope)).sort())]);
    });

    it("erases a user's scope records with their conversations: delete({ userId })", async () => {
      const scope = user();
      const other = user();
      await store().append({ ...scope, conversationId: "c1" }, numbered(1));
      await store().setState(scopeKeyOf(scope), "facts", { facts: ["secret"] });
      await store().setState(scopeKeyOf(other), "facts", { facts: ["kept"] });
      expect(await store().delete(scope)).toBe(2);
      expect(await store().getState(scopeKeyOf(scope), "facts")).toBeUndefined();
      expect(await listAll(store(), { ...scope, [SCOPE_FIELD]: "userId" })).toEqual([]);
      expect(await store().getState(scopeKeyOf(other), "facts")).toEqual({ facts: ["kept"] });
    });

    it("locks a scope record, and refuses a write under a lock its erasure took away", async () => {
      const lockable = store();
      if (!lockable.lock) throw new Error(`${lockable.name}: lock is missing`);
      const scope = user();
      const lock = await lockable.lock(scopeKeyOf(scope), { ttlMs: 5_000 });
      await lockable.setState(scopeKeyOf(scope), "facts", { n: 1 }, { lock });
      await lockable.delete(scope);
      await expect(lockable.setState(scopeKeyOf(scope), "facts", { n: 2 }, { lock })).rejects.toMatchObject({ code: "LOCK_LOST" });
      await lock.release();
      expect(await lockable.getState(scopeKeyOf(scope), "facts")).toBeUndefined();
    });
  });
}
