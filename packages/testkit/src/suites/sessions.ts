import { HumanMessage } from "@langchain/core/messages";
import type { SessionKey } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered, randomKey, transcript } from "../fixtures.js";
import { useStore, withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** Keys that try to escape a path, a key prefix or a query, or to collide. */
export const HOSTILE_BUT_VALID_IDS = [
  "../../etc/passwd",
  "..",
  "a/b\\c",
  "user:1:messages",
  "{tag}*?[x]",
  "with space",
  "__proto__",
  "constructor",
  "$where",
  "'; DROP TABLE messages; --",
  "%2e%2e%2f",
  "ÄÖÜ-日本-🎉",
  "x".repeat(256),
];

export const INVALID_IDS: unknown[] = ["", "line\nbreak", "nul\u0000", "x".repeat(257), 42, null, { $gt: "" }, ["a"]];

async function listAll(
  store: { list: (f?: Record<string, string>, o?: { limit?: number; cursor?: string }) => Promise<{ sessions: SessionKey[]; cursor?: string }> },
  filter: Record<string, string>,
  limit: number,
) {
  const keys: SessionKey[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list(filter, { limit, cursor });
    keys.push(...page.sessions);
    cursor = page.cursor;
    if (++pages > 1000) throw new Error("list() never ended");
  } while (cursor !== undefined);
  return keys;
}

/** Isolation, hostile keys, count / clear, listing and erasure by key field. */
export function sessionsSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: sessions`, () => {
    const store = useStore(setup);

    it("keeps sessions apart, including keys that differ only in field names", async () => {
      const tag = crypto.randomUUID();
      const a = { userId: `u-${tag}`, conversationId: "c" };
      const b = { userId: "c", conversationId: `u-${tag}` };
      await store().append(a, [new HumanMessage("for a")]);
      await store().append(b, [new HumanMessage("for b")]);
      expect(transcript(await store().read(a))).toEqual(["human: for a"]);
      expect(transcript(await store().read({ conversationId: "c", userId: `u-${tag}` }))).toEqual(["human: for a"]);
      expect(transcript(await store().read(b))).toEqual(["human: for b"]);
    });

    it("stores hostile but valid ids as ordinary, separate sessions", async () => {
      const tag = crypto.randomUUID();
      const keys = HOSTILE_BUT_VALID_IDS.map((id) => ({ tenant: tag, sessionId: id }));
      for (const [i, key] of keys.entries()) await store().append(key, [new HumanMessage(`message ${i}`)]);
      for (const [i, key] of keys.entries()) expect(transcript(await store().read(key))).toEqual([`human: message ${i}`]);
      const listed = await listAll(store(), { tenant: tag }, 5);
      expect(listed.map((k) => k.sessionId).sort()).toEqual([...HOSTILE_BUT_VALID_IDS].sort());
      expect(await store().delete({ tenant: tag })).toBe(keys.length);
    });

    it("rejects invalid keys with a typed error naming the field, writing nothing", async () => {
      const tag = crypto.randomUUID();
      for (const bad of INVALID_IDS) {
        const key = { tenant: tag, sessionId: bad } as never;
        await expect(store().append(key, numbered(1))).rejects.toMatchObject({ code: "INVALID_SESSION_KEY", field: "sessionId" });
        await expect(store().read(key)).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
      }
      await expect(store().append({} as never, numbered(1))).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
      await expect(store().append({ ["bad-field"]: "x" }, numbered(1))).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
      expect((await store().list({ tenant: tag })).sessions).toEqual([]);
    });

    it("clears one session and leaves the others", async () => {
      const a = randomKey();
      const b = randomKey();
      await store().append(a, numbered(3));
      await store().append(b, numbered(2));
      await store().clear(a);
      await store().clear(randomKey()); // clearing an unknown session is fine
      expect(await store().read(a)).toEqual([]);
      expect(await store().count(b)).toBe(2);
      await store().append(a, numbered(1, 7));
      expect(transcript(await store().read(a))).toEqual(["human: m7"]);
    });

    it("forgets turn ids with the session: a cleared session takes the same turn id again", async () => {
      const key = randomKey();
      await store().append(key, numbered(1), { turnId: "t" });
      await store().clear(key);
      expect(await store().append(key, numbered(1), { turnId: "t" })).toEqual({ appended: true });
    });

    it("lists sessions by any key field, a page at a time, each once", async () => {
      const user = `u-${crypto.randomUUID()}`;
      const other = `u-${crypto.randomUUID()}`;
      for (let i = 0; i < 7; i++) await store().append({ userId: user, conversationId: `c${i}` }, numbered(1));
      await store().append({ userId: other, conversationId: "c0" }, numbered(1));
      const listed = await listAll(store(), { userId: user }, 3);
      expect(listed.map((k) => k.conversationId).sort()).toEqual(["c0", "c1", "c2", "c3", "c4", "c5", "c6"]);
      for (const key of listed) expect(key.userId).toBe(user);
      const byConversation = await listAll(store(), { userId: other, conversationId: "c0" }, 10);
      expect(byConversation).toEqual([{ userId: other, conversationId: "c0" }]);
    });

    it("refuses a bad page size", async () => {
      await expect(store().list({}, { limit: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });

    it("erases every session of a user, and only those (checked by reading back)", async () => {
      const user = `u-${crypto.randomUUID()}`;
      const keep = { userId: `u-${crypto.randomUUID()}`, conversationId: "c0" };
      const doomed = [0, 1, 2].map((i) => ({ userId: user, conversationId: `c${i}` }));
      for (const key of [...doomed, keep]) await store().append(key, numbered(2));
      expect(await store().delete({ userId: user })).toBe(3);
      for (const key of doomed) {
        expect(await store().read(key)).toEqual([]);
        expect(await store().count(key)).toBe(0);
      }
      expect((await store().list({ userId: user })).sessions).toEqual([]);
      expect(await store().count(keep)).toBe(2);
      expect(await store().delete({ userId: user })).toBe(0);
    });

    it("erases consistently while appends race it: whole turns remain, and count matches what reads back", async () => {
      const eraser = setup.createPeer ? await setup.createPeer(store()) : store();
      await withStores(eraser === store() ? [] : [eraser], async () => {
        const userId = `erase-${crypto.randomUUID()}`;
        const key = { userId, conversationId: "c" };
        for (let round = 0; round < 10; round++) {
          await Promise.all([...Array.from({ length: 4 }, (_, i) => store().append(key, numbered(2, 10 * round + 2 * i))), eraser.delete({ userId })]);
          const stored = transcript(await store().read(key));
          expect(await store().count(key)).toBe(stored.length);
          for (let i = 0; i < stored.length; i += 2) {
            expect(Number(stored[i + 1]?.slice("human: m".length))).toBe(Number(stored[i]!.slice("human: m".length)) + 1);
          }
        }
      });
    });

    it("refuses to erase with an empty filter", async () => {
      const key = randomKey();
      await store().append(key, numbered(1));
      await expect(store().delete({})).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(await store().count(key)).toBe(1);
    });
  });
}
