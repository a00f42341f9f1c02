import type { BaseMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, type MemoryStrategy, RunnableWithMessageHistory, type TurnLock } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { numbered, randomKey, serializedTurnProblems } from "../fixtures.js";
import { useStore, withStores } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** A lock token no holder has: what a turn whose lease was taken over carries. */
const STALE: TurnLock = { token: "a-holder-that-lost-the-lock", lost: true, release: async () => {} };

/** A strategy that records derived state after every stored turn, as summaries and entity memories do. */
const deriving: MemoryStrategy = {
  name: "deriving",
  load: ({ read }) => read(),
  afterSave: async ({ state, added }) =>
    state.set(
      "derived",
      added.map((m) => String(m.content)),
    ),
};

/** A runnable that parks inside the "model" until told to answer. */
function parkedModel() {
  let entered!: () => void;
  let answer!: () => void;
  const inside = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const go = new Promise<void>((resolve) => {
    answer = resolve;
  });
  const runnable = RunnableLambda.from(async (messages: BaseMessage[]) => {
    entered();
    await go;
    return `answer to ${messages[messages.length - 1]?.content}`;
  });
  return { runnable, inside, answer };
}

/**
 * Turn locks as leases with fencing, and erasure that sticks: a write under a lost
 * lock is refused and writes nothing; an erased session stays erased whatever its
 * in-flight turns do; a lease outlives its TTL while its turn runs; a caller's
 * turn id makes a retry safe.
 */
export function fencingSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: fencing and erasure`, () => {
    const store = useStore(setup);
    const lockOf = (s: HistoryStore) => s.lock.bind(s);

    it("refuses an append or a state write under a lock another holder has, and writes nothing", async () => {
      const key = randomKey();
      const held = await lockOf(store())(key, { ttlMs: 10_000 });
      try {
        await store().append(key, numbered(2), { lock: held });
        await expect(store().append(key, numbered(2, 100), { lock: STALE })).rejects.toMatchObject({ code: "LOCK_LOST" });
        await expect(store().setState(key, "summary", "late", { lock: STALE })).rejects.toMatchObject({ code: "LOCK_LOST" });
        expect(await store().count(key)).toBe(2);
        expect(await store().getState(key, "summary")).toBeUndefined();
      } finally {
        await held.release();
      }
      const fresh = randomKey();
      await expect(store().append(fresh, numbered(1), { lock: STALE })).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await store().count(fresh)).toBe(0);
      expect((await store().list(fresh)).sessions).toEqual([]);
    });

    it("a turn's last save stores it and may give the lock back with it: after release, the lock is free and fences its holder off", async () => {
      const key = randomKey();
      const turn = await store().openTurn(key, { ttlMs: 10_000 });
      expect(turn.history).toBeUndefined(); // nothing asked, nothing read
      expect((await turn.save(numbered(2), { turnId: "released-turn", last: true })).appended).toBe(true);
      await turn.release(); // nothing left to do where the save gave the lock back
      await turn.release(); // and safe twice
      // Free now, not when the lease runs out: a second holder takes it without waiting.
      const next = await store().openTurn(key, { ttlMs: 10_000, waitMs: 0 });
      await next.release();
      expect(await store().count(key)).toBe(2);
      // Given back, the lock fences its holder off like a lost one.
      await expect(store().append(key, numbered(1, 50), { lock: turn.lock })).rejects.toMatchObject({ code: "LOCK_LOST" });
      await expect(turn.save(numbered(1, 60))).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await store().count(key)).toBe(2);
      // The turn id was kept with the write: a retry of the same turn stores nothing.
      expect((await store().append(key, numbered(2), { turnId: "released-turn" })).appended).toBe(false);
      const retry = await store().openTurn(key);
      expect((await retry.save(numbered(2), { turnId: "released-turn" })).appended).toBe(false);
      await retry.release();
      expect(await store().count(key)).toBe(2);
    });

    it("fences off a lock's holder once its session is erased by delete or clear", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const key = { userId, conversationId: "c1" };
      const held = await lockOf(store())(key);
      await store().append(key, numbered(2), { lock: held });
      expect(await store().delete({ userId })).toBe(1);
      await expect(store().append(key, numbered(2, 200), { lock: held })).rejects.toMatchObject({ code: "LOCK_LOST" });
      await expect(store().setState(key, "summary", "after", { lock: held })).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await store().count(key)).toBe(0);
      expect((await store().list({ userId })).sessions).toEqual([]);
      await held.release();

      const other = randomKey();
      const again = await lockOf(store())(other);
      await store().append(other, numbered(1), { lock: again });
      await store().clear(other);
      await expect(store().append(other, numbered(1), { lock: again })).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await store().count(other)).toBe(0);
      await again.release();
    });

    it("a delete during a turn's model call sticks: the turn is refused, nothing of it or derived from it is stored", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const key = { userId, conversationId: "c1" };
      const model = parkedModel();
      const chain = new RunnableWithMessageHistory({ runnable: model.runnable, store: store(), memory: deriving, sessionFields: ["userId", "conversationId"] });
      await store().append(key, [new HumanMessage("sentinel said before")]);
      const turn = chain.invoke("sentinel said during", { configurable: key });
      await model.inside;
      expect(await store().delete({ userId })).toBe(1);
      model.answer();
      const error = await turn.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "SAVE_FAILED", outcome: "not-stored", cause: { code: "LOCK_LOST" } });
      expect(await store().count(key)).toBe(0);
      expect(await store().getState(key, "derived")).toBeUndefined();
      expect((await store().list({ userId })).sessions).toEqual([]);
    });

    it("a turn's history is exactly what a read under its lock returns, and its save is fenced by that lock", async () => {
      const key = randomKey();
      const shapes = [{}, { last: 5 }, { last: 0 }, { last: 100 }];
      for (const session of [0, 30]) {
        if (session > 0) await store().append(key, numbered(session));
        for (const read of shapes) {
          const turn = await store().openTurn(key, { read });
          try {
            const under = await store().read(key, read);
            expect(turn.history?.map((m) => [m.getType(), m.content, m.id])).toEqual(under.map((m) => [m.getType(), m.content, m.id]));
            expect((await turn.save(numbered(1, 900))).appended).toBe(true);
            await expect(store().append(key, numbered(1, 901), { lock: STALE })).rejects.toMatchObject({ code: "LOCK_LOST" });
          } finally {
            await turn.release();
          }
        }
      }
      // A bad window is refused before the lock is taken: the session is free at once.
      await expect(store().openTurn(key, { read: { last: -1 } })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await (await store().openTurn(key, { waitMs: 0 })).release();
    });

    it("a turn longer than its lock's TTL keeps the lock: 4 turns of 2 TTLs over two instances, none misses another", async () => {
      const peer = setup.createPeer ? await setup.createPeer(store()) : undefined;
      await withStores(peer ? [peer] : [], async () => {
        const key = randomKey();
        // Renewed every third of the TTL: one second lets a busy machine stall a renewal
        // for 0.6 s without losing the lease (at 500 ms, a 0.33 s stall under a loaded
        // test run once did).
        const ttlMs = 1_000;
        const chains = [store(), peer ?? store()].map(
          (s, i) =>
            new RunnableWithMessageHistory({
              store: s,
              lockOptions: { ttlMs },
              runnable: RunnableLambda.from(async (messages: BaseMessage[]) => {
                await new Promise((r) => setTimeout(r, 2 * ttlMs));
                return `w${i} saw ${messages.length}`;
              }),
            }),
        );
        await Promise.all(Array.from({ length: 4 }, (_, n) => chains[n % 2]!.invoke(`w${n % 2}-${n}`, { configurable: key })));
        expect(serializedTurnProblems(await store().read(key), 4)).toEqual([]);
      });
    });

    it("a retry with the caller's turn id (configurable.turnId) is stored once, and derived state is not folded twice", async () => {
      const key = randomKey();
      let calls = 0;
      const chain = new RunnableWithMessageHistory({
        store: store(),
        memory: deriving,
        runnable: RunnableLambda.from(async () => `answer ${++calls}`),
      });
      const config = { configurable: { ...key, turnId: "turn-1" } };
      expect(await chain.invoke("question", config)).toBe("answer 1");
      expect(await chain.invoke("question", config)).toBe("answer 2"); // the retry resolves: its turn is stored
      const stored = await store().read(key);
      expect(stored.map((m) => m.content)).toEqual(["question", "answer 1"]);
      expect(await store().getState(key, "derived")).toEqual(["question", "answer 1"]);
      await expect(chain.invoke("q", { configurable: { ...key, turnId: "" } })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });
}
