import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createInMemoryStore, createSessionKey } from "../src/index.js";
import { LocalLeases } from "../src/local-leases.js";

const key = createSessionKey({ sessionId: "s" });

// A free session's lock is taken at once, without the polling loop; these check that
// the short way keeps what the loop promises. The testkit's exclusion tests run only
// on stores with a cross-process lock, so these are the ones for locks in the process.
describe("turn locks held in the process (LocalLeases)", () => {
  it("excludes a second holder until the first releases, then hands the lock to a waiter", async () => {
    const leases = new LocalLeases();
    const first = await leases.lock("s", key, { ttlMs: 10_000 });
    await expect(leases.lock("s", key, { waitMs: 0 })).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
    const other = await leases.lock("t", createSessionKey({ sessionId: "t" }), { waitMs: 0 });
    await other.release();
    const waiting = leases.lock("s", key, { waitMs: 5_000 });
    await first.release();
    const second = await waiting;
    expect(second.token).not.toBe(first.token);
    expect(() => leases.check("s", key, { lock: first })).toThrow(expect.objectContaining({ code: "LOCK_LOST" }));
    leases.check("s", key, { lock: second });
    await second.release();
  });

  it("takes over a lease that ran out, and its old holder's writes are refused", async () => {
    const leases = new LocalLeases();
    const stale = await leases.lock("s", key, { ttlMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const taken = await leases.lock("s", key, { waitMs: 0 });
    expect(() => leases.check("s", key, { lock: stale })).toThrow(expect.objectContaining({ code: "LOCK_LOST" }));
    await stale.release(); // no longer its to release: the new holder keeps it
    leases.check("s", key, { lock: taken });
    await taken.release();
  });

  it("refuses an aborted signal with its reason and takes nothing, even for a free session", async () => {
    const leases = new LocalLeases();
    const reason = new Error("gone");
    await expect(leases.lock("s", key, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    const next = await leases.lock("s", key, { waitMs: 0 });
    await next.release();
  });

  it("checks its options on the short way too, and takes nothing when they are wrong", async () => {
    const store = createInMemoryStore();
    await expect(store.lock(key, { ttlMs: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(store.lock(key, { waitMs: Number.NaN })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const next = await store.lock(key, { waitMs: 0 });
    await next.release();
    await store.close();
  });

  it("serves the in-memory store: a write under a lock someone else now holds is refused, and nothing is written", async () => {
    const store = createInMemoryStore();
    const first = await store.lock(key, { ttlMs: 10_000 });
    await expect(store.lock(key, { waitMs: 0 })).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
    await store.append(key, [new HumanMessage("under the lock")], { lock: first });
    await first.release();
    const second = await store.lock(key, { waitMs: 0 });
    await expect(store.append(key, [new HumanMessage("late")], { lock: first })).rejects.toMatchObject({ code: "LOCK_LOST" });
    await second.release();
    expect((await store.read(key)).map((message) => message.content)).toEqual(["under the lock"]);
    await store.close();
  });
});
