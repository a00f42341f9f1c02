import { randomBytes } from "node:crypto";
import { statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunnableLambda } from "@langchain/core/runnables";
import { MemoriaError, RunnableWithMessageHistory } from "@memoria/core";
import { onSmallDisk, running, startRedis } from "@memoria/testkit/servers";
import { describe, expect, it } from "vitest";
import { createRedisStore } from "../src/index.js";

/** What the file system under `path` has left for a file, in bytes. */
const freeBytes = (path: string) => {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
};

/*
 * Redis's disk filled under a conversation, its append-only file on a real tmpfs, with
 * every write fsynced (as the tests' servers run) and once a second (Redis's default with
 * AOF on). The turn that cannot be written must reject
 * with a typed error true to what the server kept, and once space is freed (and a server
 * that stopped started again) every turn that resolved is there and the next one works.
 */
describe.each(["always", "everysec"])("redis (appendfsync %s) on a full disk", (fsync) => {
  it("rejects the turn that does not fit with a typed error, keeps every turn it resolved, and works again once space is freed", { timeout: 120_000 }, async (context) => {
    await onSmallDisk(32 * 1024 * 1024, (reason) => context.skip(reason), async (diskPath) => {
      const server = await startRedis(["--appendfsync", fsync], { under: diskPath });
      const store = createRedisStore({ url: server.url, operationTimeoutMs: 5_000 });
      try {
        const filler = join(diskPath, "filler");
        writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(diskPath) - 3 * 1024 * 1024)));
        const chain = new RunnableWithMessageHistory({ store, lockOptions: { ttlMs: 5_000 }, runnable: RunnableLambda.from(() => "ok") });
        const config = { configurable: { sessionId: "full" } };
        let resolved = 0;
        let failure: unknown;
        for (let i = 0; i < 200 && !failure; i++) {
          await chain.invoke(`turn ${i} ${randomBytes(45_000).toString("base64")}`, config).then(
            () => resolved++,
            (error: unknown) => {
              failure = error;
            },
          );
        }
        expect(resolved).toBeGreaterThan(0);
        // Refused at the save (SaveError), or, where Redis refuses every write once its file
        // failed, at the turn's start, when the lock is taken: before the model ran.
        const cause = MemoriaError.hasCode(failure, "SAVE_FAILED") ? (failure as { cause: unknown }).cause : failure;
        expect(cause).toMatchObject({ code: "STORE_UNAVAILABLE" });
        const { outcome } = failure as { outcome: string };
        expect(["not-stored", "unknown"]).toContain(outcome);

        unlinkSync(filler);
        const died = !running(server.pid);
        if (died) await server.restart(); // on the freed disk, from its append-only file
        const message = (cause as Error).message;
        console.log(`redis (appendfsync ${fsync}) on a full disk: ${resolved} turns stored, then ${outcome} (${message.slice(0, 90)}); the server ${died ? "died" : "lived"}`);
        const stored = await store.count({ sessionId: "full" });
        // Every resolved turn is there; the failed one only if its outcome said it might be.
        expect(outcome === "not-stored" ? [2 * resolved] : [2 * resolved, 2 * resolved + 2]).toContain(stored);
        await expect(chain.invoke("small again", config)).resolves.toBe("ok");
        expect(await store.count({ sessionId: "full" })).toBe(stored + 2);
      } finally {
        await store.close();
        await server.stop();
      }
    });
  });
});
