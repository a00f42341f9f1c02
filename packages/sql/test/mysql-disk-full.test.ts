import { statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import { onSmallDisk, running, startMariadb } from "@memoria/testkit/servers";
import { describe, expect, it } from "vitest";
import { createMysqlStore } from "../src/index.js";

/** What the file system under `path` has left for a file, in bytes. */
const freeBytes = (path: string) => {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
};

/*
 * What MariaDB 10.11 does when its disk fills, as seen here: InnoDB cannot extend the
 * table's file (error 28) and the server aborts mid-statement, its clients' connections
 * cut. So a full disk is, to memoria, a server that died during a turn: that turn must
 * reject with a typed error whose outcome is true to what the server kept, and every
 * turn that resolved must be there once space is freed and the server is back.
 */
describe("mysql (MariaDB) on a full disk", () => {
  it("rejects the turn that does not fit with a typed error, keeps every turn it resolved, and works again once space is freed and the server is back", { timeout: 180_000 }, async (context) => {
    // The whole server on a tmpfs: a fresh data folder takes about 80 MB (InnoDB's system
    // tablespace), so 160 MB leaves room to start, and a filler takes all but 3 MB of the rest.
    await onSmallDisk(160 * 1024 * 1024, (reason) => context.skip(reason), async (diskPath) => {
      const server = await startMariadb({ under: diskPath, logFileSize: "4M", durable: true });
      const store = createMysqlStore({ uri: server.url });
      try {
        await store.ready();
        const filler = join(diskPath, "filler");
        writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(diskPath) - 3 * 1024 * 1024)));
        const chain = new RunnableWithMessageHistory({ store, lockOptions: { ttlMs: 5_000 }, runnable: RunnableLambda.from(() => "ok") });
        const config = { configurable: { sessionId: "full" } };
        let resolved = 0;
        let failure: unknown;
        for (let i = 0; i < 200 && !failure; i++) {
          await chain.invoke(`turn ${i} ${"x".repeat(60_000)}`, config).then(
            () => resolved++,
            (error: unknown) => {
              failure = error;
            },
          );
        }
        expect(resolved).toBeGreaterThan(0);
        expect(failure).toMatchObject({ code: "SAVE_FAILED", cause: { code: "STORE_UNAVAILABLE" } });
        const { outcome } = failure as { outcome: string };
        expect(["not-stored", "unknown"]).toContain(outcome);
        expect((failure as { cause: Error }).cause.message).toMatch(/out of disk|unreachable/);

        unlinkSync(filler);
        const died = !running(server.pid);
        if (died) await server.crash(); // started again, on the freed disk
        console.log(`MariaDB on a full disk: ${resolved} turns stored, then ${outcome} (${(failure as { cause: Error }).cause.message.slice(0, 80)}); server ${died ? "died" : "lived"}`);
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
