import { describe, expect, it } from "vitest";
import { createSessionKey } from "../src/index.js";
import { type PolledLock, pollForLock } from "../src/store-kit.js";

const key = createSessionKey({ sessionId: "s" });

/** A lock whose tries answer from `answers` in turn, counting tries and releases. */
function scripted(...answers: (boolean | Error)[]): PolledLock & { tries: number; releases: number } {
  const lock = {
    owner: "me",
    tries: 0,
    releases: 0,
    async renew() {
      return true;
    },
    async take() {
      const answer = answers[Math.min(lock.tries++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return answer as boolean;
    },
    async release() {
      lock.releases++;
    },
  };
  return lock;
}

describe("pollForLock", () => {
  it("tries until the lock is taken, and releases it once however often release is called", async () => {
    const lock = scripted(false, false, true);
    const held = await pollForLock(key, { waitMs: 5_000 }, lock);
    expect([lock.tries, lock.releases]).toEqual([3, 0]);
    await held.release();
    await held.release();
    expect(lock.releases).toBe(1);
  });

  it("gives back what an abandoned try may have taken: on timeout, on abort, and when a try throws", async () => {
    const timedOut = scripted(false);
    await expect(pollForLock(key, { waitMs: 20 }, timedOut)).rejects.toMatchObject({ code: "LOCK_TIMEOUT" });
    expect(timedOut.releases).toBe(1);

    const controller = new AbortController();
    const aborted = scripted(false);
    const waiting = pollForLock(key, { waitMs: 5_000, signal: controller.signal }, aborted);
    controller.abort(new Error("caller gave up"));
    await expect(waiting).rejects.toThrow("caller gave up");
    expect(aborted.releases).toBe(1);

    const broken = scripted(false, new Error("connection reset"));
    await expect(pollForLock(key, { waitMs: 5_000 }, broken)).rejects.toThrow("connection reset");
    expect([broken.tries, broken.releases]).toEqual([2, 1]);
  });

  it("reports the try's own error when the release after it fails too", async () => {
    const lock = {
      owner: "me",
      take: async () => Promise.reject(new Error("down")),
      release: async () => Promise.reject(new Error("still down")),
      renew: async () => true,
    };
    await expect(pollForLock(key, {}, lock)).rejects.toThrow(/^down$/);
  });

  it("renews a held lease every third of its TTL, and marks it lost when a renewal finds another holder", async () => {
    let renewals = 0;
    let stillMine = true;
    const lock = {
      owner: "me",
      take: async () => true,
      release: async () => {},
      renew: async () => {
        renewals++;
        return stillMine;
      },
    };
    const held = await pollForLock(key, { ttlMs: 60 }, lock);
    expect(held.token).toBe("me");
    await new Promise((r) => setTimeout(r, 150));
    expect(held.lost).toBe(false);
    stillMine = false;
    await new Promise((r) => setTimeout(r, 60));
    expect(held.lost).toBe(true);
    const after = renewals;
    await new Promise((r) => setTimeout(r, 60));
    expect(renewals).toBe(after); // a lost lease stops renewing
    await held.release();
  });

  it("marks a lease lost when renewals fail for a whole TTL, and stops renewing once released", async () => {
    let renewals = 0;
    const lock = {
      owner: "me",
      take: async () => true,
      release: async () => Promise.reject(new Error("down")),
      renew: async () => {
        renewals++;
        throw new Error("down");
      },
    };
    // Timed by the renewals themselves, not by sleeps: a busy machine once fired a 40 ms
    // timer after the 60 ms lease had run out, and "still ours" failed.
    const ttlMs = 300;
    const until = async (done: () => boolean) => {
      for (const start = Date.now(); !done(); await new Promise((r) => setTimeout(r, 5))) if (Date.now() - start > 10_000) throw new Error("never happened");
    };
    const acquired = Date.now();
    const held = await pollForLock(key, { ttlMs }, lock);
    await until(() => renewals >= 1);
    if (Date.now() - acquired < ttlMs) expect(held.lost).toBe(false); // a renewal failed within the lease: still ours
    await until(() => held.lost); // failing for a whole lease: lost
    await expect(held.release()).resolves.toBeUndefined(); // a release that fails does not reject
    const released = await pollForLock(
      key,
      { ttlMs: 30 },
      {
        ...lock,
        renew: async () => {
          renewals++;
          return true;
        },
      },
    );
    await released.release();
    const after = renewals;
    await new Promise((r) => setTimeout(r, 60));
    expect(renewals).toBe(after);
  });

  it("refuses a TTL or wait that is not a number of milliseconds", async () => {
    const lock = scripted(true);
    await expect(pollForLock(key, { ttlMs: 0 }, lock)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(pollForLock(key, { waitMs: Number.NaN }, lock)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});
