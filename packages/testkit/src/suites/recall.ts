import { type HistoryStore, type RecallHit, type RecallIndex, type RecallItem, type SessionKey, encodeSessionKey, scopeKeyOf } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** A user's scope and three conversations of theirs, with messages (an index keeps items of stored sessions only). */
async function userWithConversations(store: HistoryStore) {
  const userId = `u-${crypto.randomUUID()}`;
  const keys: SessionKey[] = ["c1", "c2", "c3"].map((conversationId) => ({ userId, conversationId }));
  for (const key of keys) await store.append(key, numbered(4));
  return { userId, scope: encodeSessionKey(scopeKeyOf({ userId })), sessions: keys.map((key) => encodeSessionKey(key)) };
}

const item = (scope: string, session: string, position: number, terms?: string[], at = 1_000): RecallItem => ({
  scope,
  session,
  position,
  at,
  vector: [1, position, 0.5],
  terms,
});
const places = (hits: { session: string; position: number }[]) => hits.map((hit) => `${hit.session}#${hit.position}`);

/**
 * The index with each query asked three times, every answer the same (places and
 * order exactly, scores to 5 places): an index that keeps a scope between queries
 * (the SQLite store holds one from its second query at a version) must rank it then
 * as it did the first time.
 */
function askedThrice(index: RecallIndex): RecallIndex {
  const same = async (ask: () => Promise<RecallHit[]>) => {
    const first = await ask();
    for (let i = 0; i < 2; i++) {
      const again = await ask();
      expect(places(again)).toEqual(places(first));
      for (const [n, hit] of again.entries()) expect(hit.score).toBeCloseTo((first[n] as RecallHit).score, 5);
    }
    return first;
  };
  const searchTerms = index.searchTerms?.bind(index);
  return {
    name: index.name,
    upsert: (items) => index.upsert(items),
    search: (scope, vector, k) => same(() => index.search(scope, vector, k)),
    searchTerms: searchTerms && ((scope, query, k) => same(() => searchTerms(scope, query, k))),
    remove: (selector) => index.remove(selector),
    ...(index.home ? { home: () => (index.home as () => Promise<string>)() } : {}),
  };
}

/**
 * The store's own recall index (`store.recallIndex()`, where it has one: the SQL
 * stores' tables, an encrypted store's sealed index), its lexical side above all:
 * ranked by BM25, replaced when an item is indexed again, kept per scope, and
 * erased with the user. Stores without an index of their own are recalled through
 * `exactIndex()`, whose tests are @memoria/memory's.
 */
export function recallSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: recall index (vectors and words)`, () => {
    const store = useStore(setup);
    const indexOf = (skip: () => void): RecallIndex => {
      const index = store().recallIndex();
      if (!index) skip();
      return askedThrice(index as RecallIndex);
    };

    it("ranks a scope's items by their words (BM25): a rare word above a common one, repeats counting, a word no item holds finding nothing", async (ctx) => {
      const index = indexOf(() => ctx.skip());
      const { scope, sessions } = await userWithConversations(store());
      const [c1, c2, c3] = sessions as [string, string, string];
      await index.upsert([
        item(scope, c1, 0, ["tom", "week"]),
        item(scope, c1, 1, ["tom", "weekend"]),
        item(scope, c2, 0, ["tom", "adopt", "greyhound", "pretzel"]),
        item(scope, c2, 1, ["tom", "tom", "pretzel"]),
        item(scope, c3, 0, ["tom", "lisbon"]),
      ]);
      const hits = await index.searchTerms!(scope, ["tom", "pretzel", "greyhound"], 10);
      // Every item holds "tom"; pretzel and greyhound are what tell them apart.
      expect(places(hits).slice(0, 2)).toEqual([`${c2}#0`, `${c2}#1`]);
      expect(hits).toHaveLength(5);
      expect(hits.every((hit, i) => i === 0 || hit.score <= (hits[i - 1] as { score: number }).score)).toBe(true);
      expect(hits[0]).toMatchObject({ at: 1_000, score: expect.any(Number) });
      expect(places(await index.searchTerms!(scope, ["tom", "pretzel", "greyhound"], 1))).toEqual([`${c2}#0`]);
      expect(await index.searchTerms!(scope, ["nothing"], 10)).toEqual([]);
      expect(await index.searchTerms!(scope, ["pretzel"], 0)).toEqual([]);
      await expect(index.searchTerms!(scope, ["pretzel"], -1)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });

    it("scores a query word by its best form: an alternative finds items without the word, at its weight, and never adds to the word itself", async (ctx) => {
      const index = indexOf(() => ctx.skip());
      const { scope, sessions } = await userWithConversations(store());
      const [c1, c2] = sessions as [string, string];
      await index.upsert([
        item(scope, c1, 0, ["dog", "~pet"]),
        item(scope, c1, 1, ["puppy", "~pet"]),
        item(scope, c1, 2, ["weather"]),
        item(scope, c2, 0, ["bus", "~transport"]),
      ]);
      const dog = (weight: number) => [{ term: "dog", alternatives: [{ term: "~pet", weight }] }];
      const [word, topic] = await index.searchTerms!(scope, dog(0.5), 10);
      expect(places([word, topic] as { session: string; position: number }[])).toEqual([`${c1}#0`, `${c1}#1`]);
      // The item holding the word scores the word alone (its topic is not added), the other the topic at half weight.
      const alone = (await index.searchTerms!(scope, ["dog"], 10))[0] as { score: number };
      const topicAlone = (await index.searchTerms!(scope, ["~pet"], 10))[0] as { score: number };
      expect(word?.score).toBeCloseTo(alone.score, 6);
      expect(topic?.score).toBeCloseTo(topicAlone.score / 2, 6);
      expect(places(await index.searchTerms!(scope, dog(0), 10))).toEqual([`${c1}#0`]);
      expect(places(await index.searchTerms!(scope, [...dog(0.5), "bus"], 10)).sort()).toEqual([`${c1}#0`, `${c1}#1`, `${c2}#0`].sort());
      await expect(index.searchTerms!(scope, dog(Number.NaN), 10)).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
        message: expect.stringContaining("~pet"),
      });
    });

    it("replaces an item's words when it is indexed again; an item given none is found by vector only", async (ctx) => {
      const index = indexOf(() => ctx.skip());
      const { scope, sessions } = await userWithConversations(store());
      const [c1] = sessions as [string];
      await index.upsert([item(scope, c1, 0, ["harbour", "ferry"]), item(scope, c1, 1, ["ferry"])]);
      await index.upsert([item(scope, c1, 0, ["glacier"])]);
      expect(places(await index.searchTerms!(scope, ["harbour"], 10))).toEqual([]);
      expect(places(await index.searchTerms!(scope, ["glacier"], 10))).toEqual([`${c1}#0`]);
      await index.upsert([item(scope, c1, 1)]);
      expect(await index.searchTerms!(scope, ["ferry"], 10)).toEqual([]);
      expect(places(await index.search(scope, [1, 1, 0.5], 10))).toContain(`${c1}#1`);
    });

    it("keeps each scope's words to itself", async (ctx) => {
      const index = indexOf(() => ctx.skip());
      const ada = await userWithConversations(store());
      const bob = await userWithConversations(store());
      await index.upsert([item(ada.scope, ada.sessions[0] as string, 0, ["orchard"])]);
      await index.upsert([item(bob.scope, bob.sessions[0] as string, 0, ["orchard", "violin"])]);
      expect(places(await index.searchTerms!(ada.scope, ["orchard", "violin"], 10))).toEqual([`${ada.sessions[0]}#0`]);
      expect(places(await index.searchTerms!(bob.scope, ["orchard"], 10))).toEqual([`${bob.sessions[0]}#0`]);
    });

    it("drops the words of removed items: by session, by time", async (ctx) => {
      const index = indexOf(() => ctx.skip());
      const { scope, sessions } = await userWithConversations(store());
      const [c1, c2] = sessions as [string, string];
      await index.upsert([item(scope, c1, 0, ["lantern"], 1_000), item(scope, c2, 0, ["lantern"], 1_000), item(scope, c2, 1, ["lantern"], 5_000)]);
      expect(await index.remove({ scope, sessions: [c1] })).toBe(1);
      expect(places(await index.searchTerms!(scope, ["lantern"], 10)).sort()).toEqual([`${c2}#0`, `${c2}#1`].sort());
      expect(await index.remove({ scope, before: 2_000 })).toBe(1);
      expect(places(await index.searchTerms!(scope, ["lantern"], 10))).toEqual([`${c2}#1`]);
    });

    it("erases a user's words and vectors with the user: delete({ userId })", async (ctx) => {
      const index = indexOf(() => ctx.skip());
      const gone = await userWithConversations(store());
      const kept = await userWithConversations(store());
      await index.upsert([item(gone.scope, gone.sessions[0] as string, 0, ["summit"]), item(kept.scope, kept.sessions[0] as string, 0, ["summit"])]);
      await store().delete({ userId: gone.userId });
      expect(await index.searchTerms!(gone.scope, ["summit"], 10)).toEqual([]);
      expect(await index.search(gone.scope, [1, 0, 0.5], 10)).toEqual([]);
      expect(places(await index.searchTerms!(kept.scope, ["summit"], 10))).toEqual([`${kept.sessions[0]}#0`]);
    });
  });
}
