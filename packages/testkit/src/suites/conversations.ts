import { HumanMessage } from "@langchain/core/messages";
import type { HistoryStore, InfoPage, SessionInfo, SessionKeyFilter } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered } from "../fixtures.js";
import { useStore, withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

async function recentAll(store: HistoryStore, filter: SessionKeyFilter, limit: number): Promise<SessionInfo[]> {
  const found: SessionInfo[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page: InfoPage = await store.recent(filter, { limit, cursor });
    found.push(...page.sessions);
    cursor = page.cursor;
    if (++pages > 1000) throw new Error("recent() never ended");
  } while (cursor !== undefined);
  return found;
}

/** Conversation info: times, counts, titles and metadata, and listing by recent activity. */
export function conversationsSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: conversations`, () => {
    const store = useStore(setup);

    it("knows when a session was made and last active, and how many messages it holds", async () => {
      const key = { userId: `u-${crypto.randomUUID()}`, conversationId: "c1" };
      expect(await store().info(key)).toBeUndefined();
      const before = Date.now();
      await store().append(key, numbered(2));
      const first = await store().info(key);
      expect(first).toMatchObject({ key, messageCount: 2 });
      expect(first?.createdAt).toBeGreaterThanOrEqual(before - 1_000);
      expect(first?.title).toBeUndefined();
      expect(first?.metadata).toBeUndefined();
      await tick();
      await store().append(key, numbered(3));
      const second = await store().info(key);
      expect(second?.messageCount).toBe(5);
      expect(second?.createdAt).toBe(first?.createdAt);
      expect(second?.lastActiveAt).toBeGreaterThan(first?.lastActiveAt as number);
    });

    it("sets, keeps and removes a title and metadata, field by field", async () => {
      const key = { sessionId: `t-${crypto.randomUUID()}` };
      await store().append(key, numbered(1));
      const metadata = { pinned: true, tags: ["trip", "été"], model: { name: "gpt-x", temperature: 0.2 }, note: null };
      await store().setInfo(key, { title: "Trip to Paris 🇫🇷", metadata });
      expect(await store().info(key)).toMatchObject({ title: "Trip to Paris 🇫🇷", metadata, messageCount: 1 });
      await store().setInfo(key, { title: "Paris" });
      expect(await store().info(key)).toMatchObject({ title: "Paris", metadata });
      await store().setInfo(key, { metadata: null });
      const cleared = await store().info(key);
      expect(cleared?.title).toBe("Paris");
      expect(cleared?.metadata).toBeUndefined();
      await store().setInfo(key, { title: null });
      expect((await store().info(key))?.title).toBeUndefined();
      expect(await store().count(key)).toBe(1);
    });

    it("makes a session with no messages when info is set first", async () => {
      const key = { userId: `u-${crypto.randomUUID()}`, conversationId: "new" };
      await store().setInfo(key, { title: "Draft" });
      expect(await store().info(key)).toMatchObject({ key, messageCount: 0, title: "Draft" });
      expect((await store().list({ userId: key.userId })).sessions).toEqual([key]);
      expect((await store().recent({ userId: key.userId })).sessions.map((s) => s.title)).toEqual(["Draft"]);
    });

    it("takes a session's times from setInfo (a copy keeps its dates), orders recent by them, and an append moves activity on", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const [old, mid, fresh] = ["old", "mid", "fresh"].map((conversationId) => ({ userId, conversationId })) as [
        { userId: string; conversationId: string },
        { userId: string; conversationId: string },
        { userId: string; conversationId: string },
      ];
      for (const key of [old, mid, fresh]) {
        await store().append(key, numbered(1));
        await tick();
      }
      const day = 86_400_000;
      const then = Date.UTC(2024, 0, 15, 9, 30);
      await store().setInfo(old, { createdAt: then, lastActiveAt: then + 2 * day });
      await store().setInfo(mid, { lastActiveAt: then + 5 * day });
      expect(await store().info(old)).toMatchObject({ createdAt: then, lastActiveAt: then + 2 * day, messageCount: 1 });
      expect((await store().info(mid))?.lastActiveAt).toBe(then + 5 * day);
      expect((await recentAll(store(), { userId }, 2)).map((s) => s.key.conversationId)).toEqual(["fresh", "mid", "old"]);
      // A session made by its info alone, dated.
      const draft = { userId, conversationId: "draft" };
      await store().setInfo(draft, { title: "Imported", createdAt: then - day, lastActiveAt: then - day });
      expect(await store().info(draft)).toMatchObject({ key: draft, createdAt: then - day, lastActiveAt: then - day, messageCount: 0, title: "Imported" });
      const before = Date.now();
      await store().append(old, numbered(1));
      const moved = await store().info(old);
      expect(moved?.createdAt).toBe(then);
      expect(moved?.lastActiveAt).toBeGreaterThanOrEqual(before - 1_000);
      expect((await recentAll(store(), { userId }, 10)).map((s) => s.key.conversationId)).toEqual(["old", "fresh", "mid", "draft"]);
    });

    it("refuses a bad title or metadata with a typed error, writing nothing", async () => {
      const key = { sessionId: `bad-${crypto.randomUUID()}` };
      const bad: unknown[] = [
        { title: "" },
        { title: "line\nbreak" },
        { title: "x".repeat(257) },
        { title: 42 },
        { metadata: [1, 2] },
        { metadata: "text" },
        { metadata: { when: new Date() } },
        { metadata: { n: Number.NaN } },
        { metadata: { big: "x".repeat(70_000) } },
        { colour: "red" },
        { createdAt: -1 },
        { lastActiveAt: 1.5 },
        { createdAt: "yesterday" },
        { createdAt: 10, lastActiveAt: 5 },
        null,
      ];
      for (const patch of bad) {
        await expect(store().setInfo(key, patch as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      }
      expect(await store().info(key)).toBeUndefined();
      await expect(store().setInfo({ sessionId: "nul\u0000" }, { title: "x" })).rejects.toMatchObject({ code: "INVALID_SESSION_KEY" });
      await expect(store().recent(undefined, { cursor: "not a cursor" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });

    it("lists a user's conversations newest activity first, a page at a time, with their info", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const keys = ["a", "b", "c", "d", "e"].map((conversationId) => ({ userId, conversationId }));
      for (const key of keys) {
        await store().append(key, numbered(1));
        await tick();
      }
      await store().append({ userId: `someone-else-${crypto.randomUUID()}`, conversationId: "a" }, numbered(1));
      await store().append(keys[1] as (typeof keys)[number], numbered(2)); // b becomes the newest
      const order = ["b", "e", "d", "c", "a"];
      for (const limit of [1, 2, 5, 100]) {
        const listed = await recentAll(store(), { userId }, limit);
        expect(listed.map((s) => s.key.conversationId)).toEqual(order);
      }
      const page = await store().recent({ userId }, { limit: 2 });
      expect(page.sessions.map((s) => [s.key, s.messageCount])).toEqual([
        [{ userId, conversationId: "b" }, 3],
        [{ userId, conversationId: "e" }, 1],
      ]);
      expect(page.cursor).toBeDefined();
      const both = await recentAll(store(), { userId, conversationId: "c" }, 10);
      expect(both.map((s) => s.key)).toEqual([{ userId, conversationId: "c" }]);
      expect((await store().recent({ userId: `nobody-${crypto.randomUUID()}` })).sessions).toEqual([]);
    });

    it("forgets the info of a cleared or erased session", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const a = { userId, conversationId: "a" };
      const b = { userId, conversationId: "b" };
      await store().append(a, [new HumanMessage("hello")]);
      await store().setInfo(a, { title: "A", metadata: { secret: "sentinel" } });
      await store().setInfo(b, { title: "B" });
      await store().clear(a);
      expect(await store().info(a)).toBeUndefined();
      expect((await store().recent({ userId })).sessions.map((s) => s.title)).toEqual(["B"]);
      await store().append(a, [new HumanMessage("again")]);
      expect(await store().info(a)).toMatchObject({ messageCount: 1 });
      expect((await store().info(a))?.title).toBeUndefined();
      expect(await store().delete({ userId })).toBe(2);
      expect(await store().info(b)).toBeUndefined();
      expect((await store().recent({ userId })).sessions).toEqual([]);
    });

    it.skipIf(!setup.createPeer)("shows a peer instance's writes", async () => {
      const peer = await (setup.createPeer as NonNullable<StoreSuiteSetup["createPeer"]>)(store());
      await withStores([peer], async () => {
        const key = { sessionId: `p-${crypto.randomUUID()}` };
        await peer.setInfo(key, { title: "from the peer" });
        await peer.append(key, numbered(2));
        expect(await store().info(key)).toMatchObject({ title: "from the peer", messageCount: 2 });
      });
    });
  });
}
