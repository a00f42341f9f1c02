import { randomBytes } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, encodeSessionKey, scopeKeyOf } from "@memoria/core";
import { type EncryptionOptions, encryptStore, guardStore, redactStore } from "@memoria/privacy";
import { describe, expect, it } from "vitest";
import { numbered, transcript } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { PrivacySuiteSetup, StoreSuiteSetup } from "../types.js";
import { conversationsSuite } from "./conversations.js";
import { scopesSuite } from "./scopes.js";
import { fencingSuite } from "./fencing.js";
import { sessionsSuite } from "./sessions.js";
import { stateSuite } from "./state.js";
import { rollbackSuite } from "./rollback.js";
import { shreddingSuite } from "./shredding.js";
import { tamperSuite } from "./tamper.js";
import { runHistoryStoreSuite } from "../store-suite.js";

/** Fresh master keys and a hash secret for one run. */
export function testKeys() {
  return { A: randomBytes(32), B: randomBytes(32), secret: randomBytes(32) };
}

/** The store each wrapped store was made from, for peers and teardown. */
const bases = new WeakMap<HistoryStore, HistoryStore>();

/**
 * The same setup, with every store wrapped by `wrap` (the base store stays reachable
 * for peers and teardown). `frozenReads`: the wrapper's reads share frozen messages
 * (`encryptStore`'s do, by default), whatever the base store's do.
 */
export function wrapped(setup: StoreSuiteSetup, wrap: (base: HistoryStore) => HistoryStore, label: string, frozenReads?: boolean): StoreSuiteSetup {
  const make = (base: HistoryStore) => {
    const store = wrap(base);
    bases.set(store, base);
    return store;
  };
  const baseOf = (store: HistoryStore) => bases.get(store) ?? store;
  return {
    name: `${setup.name} ${label}`,
    createStore: async () => make(await setup.createStore()),
    destroyStore: async (store) => (setup.destroyStore ? setup.destroyStore(baseOf(store)) : store.close()),
    createPeer: setup.createPeer && (async (store) => make(await setup.createPeer!(baseOf(store)))),
    createStoreWithTtl: setup.createStoreWithTtl && (async (ttl) => make(await setup.createStoreWithTtl!(ttl))),
    largeSessionSize: setup.largeSessionSize,
    frozenReads: frozenReads ?? setup.frozenReads,
  };
}

/** Whether `encryptStore(…, options)` hands reads frozen messages (its `frozen` option's default). */
const readsFrozen = (options: EncryptionOptions) => options.frozen ?? true;

/** The same setup, with every store wrapped by `encryptStore(…, options)`. */
export function encrypted(setup: StoreSuiteSetup, options: EncryptionOptions, label: string): StoreSuiteSetup {
  return wrapped(setup, (base) => encryptStore(base, options), label, readsFrozen(options));
}

/**
 * Privacy, proven on one kind of store: the whole conformance suite run through
 * `guardStore(redactStore(encryptStore(store)))`, the key-field suites again with
 * encryption and hashed ids, tampering of
 * every kind refused, truncation and rollback refused, a key rotation that ends with the old key dropped, and (where
 * the setup can scan the store's raw data) no plaintext of a message, a summary or
 * a hashed user id anywhere in it.
 */
export function privacySuite(setup: PrivacySuiteSetup): void {
  const keys = testKeys();
  const sealed: EncryptionOptions = { keys: { A: keys.A }, activeKeyId: "A" };
  const hashed: EncryptionOptions = { ...sealed, hashIds: { secret: keys.secret } };

  // Every privacy wrapper at once, each forwarding what it does not change: an
  // authorize hook that allows all, the built-in redactor, and encryption.
  runHistoryStoreSuite(
    wrapped(setup, (base) => guardStore(redactStore(encryptStore(base, sealed)), () => true), "(encrypted, redacted, guarded)", readsFrozen(sealed)),
  );
  const withHashedIds = encrypted(setup, hashed, "(encrypted, hashed ids)");
  sessionsSuite(withHashedIds);
  conversationsSuite(withHashedIds);
  scopesSuite(withHashedIds);
  stateSuite(withHashedIds);
  fencingSuite(withHashedIds);
  tamperSuite(setup, sealed);

  describe(`${setup.name}: the privacy wrappers' capabilities`, () => {
    const store = useStore(setup);
    // What prune and trim do through the wrappers, the expiry and compaction suites above run.
    it("are the store's own: each wrapper declares the store's capabilities, and opens it with ready()", async () => {
      const inner = store();
      for (const wrapper of [encryptStore(inner, sealed), redactStore(inner), guardStore(inner, () => true)]) {
        expect(wrapper.capabilities).toEqual(inner.capabilities);
        await wrapper.ready();
      }
    });
  });
  rollbackSuite(setup, sealed);
  shreddingSuite(setup, sealed);

  describe(`${setup.name}: encryption at rest`, () => {
    const inner = useStore(setup);

    it("keeps a rotated-out key unnecessary after rekey: write under A, rotate to B, rekey, drop A, read all back, long-term memory too", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const sessions = [1, 2, 3].map((n) => ({ userId, conversationId: `c${n}` }));
      const underA = encryptStore(inner(), hashed);
      for (const key of sessions) {
        await underA.append(key, numbered(3));
        await underA.setState(key, "summary", { text: `summary of ${key.conversationId}` });
      }
      // Long-term memory: the user's scope record, and a team scope that no listed
      // conversation shares fields with (found only when named in `scopes`).
      const memory = scopeKeyOf({ userId });
      const team = scopeKeyOf({ userId, teamId: "t1" });
      await underA.setState(memory, "facts", { facts: [{ statement: "Ada lives in Lisbon" }] });
      await underA.setState(memory, "profile", "Ada, in Lisbon");
      await underA.setInfo(memory, { title: "Ada's memory" });
      await underA.setState(team, "facts", { facts: [{ statement: "the team ships on Fridays" }] });
      // Recall's sealed index (vectors and words) lives in the same scope record.
      const recallScope = encodeSessionKey(memory);
      const indexed = { scope: recallScope, session: encodeSessionKey(sessions[0]!), position: 0, at: 1, vector: [1, 0], terms: ["lisbon"] };
      await underA.recallIndex().upsert([indexed]);
      const both = encryptStore(inner(), { ...hashed, keys: { A: keys.A, B: keys.B }, activeKeyId: "B" });
      await both.append(sessions[0]!, numbered(1, 3)); // old sessions stay writable meanwhile
      const stopper = new AbortController();
      const stopped = await both.rekey({ filter: { userId }, pageSize: 1, signal: stopper.signal, onProgress: () => stopper.abort() }).catch((e: unknown) => e);
      expect(stopped).toBeInstanceOf(Error); // interrupted after the first session
      const progress: { seen: number; rewrapped: number }[] = [];
      const report = await both.rekey({ filter: { userId }, scopes: [["teamId", "userId"]], onProgress: (p) => progress.push(p) });
      expect(report).toEqual({ seen: 5, rewrapped: 4 }); // two sessions and two scope records were left
      expect(progress.map((p) => p.seen)).toEqual([1, 2, 3, 4, 5]); // reported after each session
      expect(progress.at(-1)).toEqual(report);
      expect(await both.rekey({ filter: { userId }, scopes: [["teamId", "userId"]] })).toEqual({ seen: 5, rewrapped: 0 });

      const onlyB = encryptStore(inner(), { ...hashed, keys: { B: keys.B }, activeKeyId: "B" });
      expect(transcript(await onlyB.read(sessions[0]!))).toEqual(transcript(numbered(4)));
      for (const key of sessions) expect(await onlyB.getState(key, "summary")).toEqual({ text: `summary of ${key.conversationId}` });
      expect(await onlyB.getAllState(memory)).toEqual({ facts: { facts: [{ statement: "Ada lives in Lisbon" }] }, profile: "Ada, in Lisbon" });
      expect(await onlyB.info(memory)).toMatchObject({ title: "Ada's memory" });
      expect(await onlyB.getState(team, "facts")).toEqual({ facts: [{ statement: "the team ships on Fridays" }] });
      const found = { session: indexed.session, position: 0, at: 1 };
      expect(await onlyB.recallIndex().searchTerms!(recallScope, ["lisbon"], 5)).toEqual([{ ...found, score: expect.any(Number) }]);
      expect(await onlyB.recallIndex().search(recallScope, [1, 0], 5)).toEqual([{ ...found, score: expect.closeTo(1, 5) }]);
      const listed = (await onlyB.list({ userId })).sessions.map((k) => k.conversationId).sort();
      expect(listed).toEqual(["c1", "c2", "c3"]);
      const onlyA = encryptStore(inner(), { ...hashed, keys: { A: keys.A }, activeKeyId: "A" });
      await expect(onlyA.read(sessions[1]!)).rejects.toMatchObject({ code: "INTEGRITY", reason: "unknown-key" });
      expect(await onlyB.delete({ userId })).toBe(5);
    });

    it("gives the raw keys back from list and erases by a raw field with hashed ids", async () => {
      const store = encryptStore(inner(), hashed);
      const userId = `ada-${crypto.randomUUID()}`;
      await store.append({ userId, conversationId: "one" }, numbered(1));
      await store.setState({ userId, conversationId: "two" }, "profile", { city: "Paris" });
      const page = await store.list({ userId });
      expect(page.sessions.map((k) => ({ ...k })).sort((a, b) => a.conversationId!.localeCompare(b.conversationId!))).toEqual([
        { userId, conversationId: "one" },
        { userId, conversationId: "two" },
      ]);
      expect((await inner().list({ userId })).sessions).toEqual([]); // the raw id names nothing stored
      expect(await store.delete({ userId })).toBe(2);
      expect(await store.count({ userId, conversationId: "one" })).toBe(0);
    });

    it.skipIf(!setup.scan)(
      `leaves no plaintext of a message, a summary, a title, metadata or a hashed user id in the raw data${setup.scan ? "" : " (skipped: no raw scan for this store)"}`,
      async () => {
        const tag = crypto.randomUUID().replaceAll("-", "");
        const control = `control-${tag}`;
        const plain = { sessionId: `plain-${tag}` };
        await inner().append(plain, [new HumanMessage(`a plaintext ${control}`)]);
        expect((await setup.scan!(inner(), control)).length).toBeGreaterThan(0); // the scan sees stored text
        await inner().clear(plain);

        const store = encryptStore(inner(), hashed);
        const user = `user-${tag}`;
        const key = { userId: user, conversationId: `conv-${tag}` };
        await store.append(key, [new HumanMessage(`my secret is message-${tag}`)]);
        await store.setState(key, "summary", { text: `summary-${tag}` });
        await store.setInfo(key, { title: `title-${tag}`, metadata: { note: `metadata-${tag}` } });
        expect(await store.read(key)).toHaveLength(1);
        expect(await store.info(key)).toMatchObject({ key, title: `title-${tag}`, metadata: { note: `metadata-${tag}` }, messageCount: 1 });
        for (const needle of [`message-${tag}`, `summary-${tag}`, `title-${tag}`, `metadata-${tag}`, user, `conv-${tag}`]) {
          expect(await setup.scan!(inner(), needle), needle).toEqual([]);
        }
        await store.delete({ userId: user });
      },
    );
  });
}
