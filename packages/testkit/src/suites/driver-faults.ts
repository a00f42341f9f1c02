import { randomBytes } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, MemoriaError } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DriverFaults } from "../driver-faults.js";
import { numbered, randomKey } from "../fixtures.js";

export interface DriverFaultSetup {
  name: string;
  /** The faults to arm; the store below must reach its server only through objects `faults.wrap` made. */
  faults: DriverFaults;
  /** A store over the wrapped driver (a client, a pool, a database handle). */
  createStore(): Promise<HistoryStore>;
  destroyStore?(store: HistoryStore): Promise<void>;
  /** The driver's own errors to inject, by what they stand for: each made as the driver makes it. */
  errors: [string, () => Error][];
  /** Calls for which an injected error means something else by design (e.g. a duplicate key on taking a lock: held by another). */
  skip?(call: string, error: string): boolean;
}

/**
 * Every store call, failed at each of its driver calls in turn, with each kind of
 * driver error (and, through `encryptStore`, with the first kind): every failure is a typed `StoreUnavailableError`, an append resolves
 * if and only if its turn is stored (and a retry with its turn id stores it once),
 * and the store stays usable. Generous timeouts: hundreds of failed calls, some of
 * them waiting out a lock lease, on a machine that may be busy.
 */
export function driverFaultSuite(setup: DriverFaultSetup): void {
  faultsOnEveryCall(setup, setup.name, setup.errors, (store) => store);
  // Through encryptStore too: its data key records, chain checks and edit marks make driver calls of their own.
  const keys = { keys: { A: randomBytes(32) }, activeKeyId: "A" };
  faultsOnEveryCall(setup, `${setup.name} (encrypted)`, setup.errors.slice(0, 1), (store) => encryptStore(store, keys));
}

function faultsOnEveryCall(setup: DriverFaultSetup, name: string, errors: DriverFaultSetup["errors"], wrap: (store: HistoryStore) => HistoryStore): void {
  describe(`${name}: every driver error on every call is typed, and a write resolves only if stored`, () => {
    const { faults } = setup;
    let store: HistoryStore;
    beforeAll(async () => {
      store = wrap(await setup.createStore());
    });
    afterAll(async () => {
      faults.disarm();
      if (store) await (setup.destroyStore ? setup.destroyStore(store) : store.close());
    });

    /** Runs `call` with a failure at each of its driver calls in turn, until it makes them all; returns the failures seen. */
    async function everyFailure(name: string, call: () => Promise<unknown>, error: () => Error, after?: (failed: unknown) => Promise<void>) {
      const failures: unknown[] = [];
      for (let at = 1; at < 100; at++) {
        faults.arm(at, error);
        const failed = await call().then(
          () => undefined,
          (e: unknown) => e ?? new Error("rejected without an error"),
        );
        const fired = faults.fired;
        faults.disarm();
        if (!fired) {
          expect(failed, `${name}, with no fault`).toBeUndefined();
          expect(at, `${name} made no driver call`).toBeGreaterThan(1);
          return failures;
        }
        if (failed) {
          failures.push(failed);
          expect(MemoriaError.isInstance(failed), `${name}, driver call ${at}: ${String(failed)}`).toBe(true);
          expect(failed, `${name}, driver call ${at}`).toMatchObject({ code: "STORE_UNAVAILABLE" });
        }
        await after?.(failed);
      }
      throw new Error(`${name}: the call never got through`);
    }

    for (const [kind, error] of errors) {
      it(`${kind}: append resolves if and only if its turn is stored, and a retry stores it once`, async () => {
        const key = randomKey("append");
        await store.append(key, numbered(2));
        let stored = 2;
        const turn = () => [new HumanMessage("q"), new HumanMessage("a")];
        const failures = await everyFailure(
          "append",
          () => store.append(key, turn(), { turnId: `t-${stored}` }),
          error,
          async (failed) => {
            const count = (await store.read(key)).length;
            // Every way of asking agrees on what is stored.
            expect(await store.count(key)).toBe(count);
            expect((await store.info(key))?.messageCount).toBe(count);
            if (!failed) expect(count).toBe(stored + 2);
            else if ((failed as { outcome?: string }).outcome === "not-stored") expect(count).toBe(stored);
            // Whatever happened, the same turn id again leaves the turn stored exactly once,
            // and a read saw the turn exactly when the retry finds it stored already.
            const retried = await store.append(key, turn(), { turnId: `t-${stored}` });
            if (failed) expect(count, "a read before the retry, against what the retry found").toBe(retried.appended ? stored : stored + 2);
            stored += 2;
            expect(await store.read(key)).toHaveLength(stored);
          },
        );
        expect(failures.length).toBeGreaterThan(0);
      }, 120_000);

      it(`${kind}: every other call fails typed and leaves the store usable`, async () => {
        const key = randomKey("calls");
        await store.append(key, numbered(30));
        await store.setState(key, "summary", "s");
        const user = { userId: `u-${crypto.randomUUID()}`, conversationId: "c" };
        const calls: [string, () => Promise<unknown>][] = [
          ["read", () => store.read(key, { last: 2 })],
          ["read all", () => store.read(key)],
          ["count", () => store.count(key)],
          ["getState", () => store.getState(key, "summary")],
          ["getAllState", () => store.getAllState(key)],
          ["setState", () => store.setState(key, "summary", "t")],
          ["info", async () => store.info(key)],
          ["setInfo", async () => store.setInfo(key, { title: "a title" })],
          ["list", () => store.list({ sessionId: key.sessionId })],
          ["recent", async () => store.recent({ sessionId: key.sessionId })],
          [
            "replaceTail",
            async () => store.replaceTail(key, { from: (await store.count(key)) - 1, count: await store.count(key), messages: [new HumanMessage("edited")] }),
          ],
          ["trim", () => store.trim(key, { oldest: 1 })],
          ["lock and release", async () => (await store.lock(key, { ttlMs: 500, waitMs: 10_000 })).release()],
          ["append then clear", async () => store.append(user, numbered(1)).then(() => store.clear(user))],
          ["append then delete", async () => store.append(user, numbered(1)).then(() => store.delete({ userId: user.userId }))],
        ];
        for (const [name, call] of calls) {
          if (setup.skip?.(name, kind)) continue;
          await everyFailure(name, call, error);
        }
        expect((await store.read(key)).length).toBeGreaterThan(0);
      }, 300_000);
    }
  });
}
