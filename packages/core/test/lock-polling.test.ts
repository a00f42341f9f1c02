import { describe, expect, it } from "vitest";
import { type PolledLock, createSessionKey, pollForLock } from "../src/index.js";

const key = createSessionKey({ sessionId: "s" });

/** A lock whose tries answer from `answers` in turn, counting tries and releases. */
function scripted(...answers: (boolean | Error)[]): PolledLock & { tries: number; releases: number } {
  const lock = {
    tries: 0,
    releases: 0,
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
    const lock = { take: async () => Promise.reject(new Error("down")), release: async () => Promise.reject(new Error("still down")) };
    await expect(pollForLock(key, {}, lock)).rejects.toThrow(/^down$/);
  });
});
