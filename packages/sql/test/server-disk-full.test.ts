import { randomBytes } from "node:crypto";
import { statfsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, RunnableWithMessageHistory } from "@memoria/core";
import { type RunningPostgres, onSmallDisk, running, startMariadb, startPostgres } from "@memoria/testkit/servers";
import { describe, expect, it } from "vitest";
import { createMysqlStore, createPostgresStore } from "../src/index.js";

/** What the file system under `path` has left for a file, in bytes. */
const freeBytes = (path: string) => {
  const { bavail, bsize } = statfsSync(path);
  return bavail * bsize;
};

interface ServerKind {
  name: string;
  start(under: string): Promise<RunningPostgres>;
  store(url: string): HistoryStore & { ready(): Promise<void> };
}

const kinds: ServerKind[] = [
  {
    name: "postgres",
    start: (under) => startPostgres({ under, durable: true }),
    store: (url) => createPostgresStore({ connectionString: url }),
  },
  {
    name: "mysql (MariaDB)",
    start: (under) => startMariadb({ under, logFileSize: "4M", durable: true }),
    store: (uri) => createMysqlStore({ uri }),
  },
];

/*
 * A server's disk filled under a conversation, the whole server on a real tmpfs. Seen
 * here: PostgreSQL refuses the statement that cannot extend a file (SQLSTATE 53100) and
 * lives on; MariaDB 10.11's InnoDB cannot extend the table's file (error 28) and the
 * server aborts, cutting every connection. Either way the turn must reject with a
 * typed error whose outcome is true to what the server kept, and once space is freed
 * (and a dead server started again) every turn that resolved is there and the next works.
 */
describe.each(kinds)("$name on a full disk", (kind) => {
  it("rejects the turn that does not fit with a typed error, keeps every turn it resolved, and works again once space is freed", { timeout: 180_000 }, async (context) => {
    // A fresh server takes about 40 MB (PostgreSQL) or 80 MB (MariaDB's system tablespace);
    // 160 MB leaves room to start, and a filler takes all but 3 MB of the rest.
    await onSmallDisk(160 * 1024 * 1024, (reason) => context.skip(reason), async (diskPath) => {
      const server = await kind.start(diskPath);
      const store = kind.store(server.url);
      try {
        await store.ready();
        const filler = join(diskPath, "filler");
        writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(diskPath) - 3 * 1024 * 1024)));
        const chain = new RunnableWithMessageHistory({ store, lockOptions: { ttlMs: 5_000 }, runnable: RunnableLambda.from(() => "ok") });
        const config = { configurable: { sessionId: "full" } };
        let resolved = 0;
        let failure: unknown;
        for (let i = 0; i < 200 && !failure; i++) {
          // Random text: PostgreSQL compresses a long value, and a repeated letter would never fill the disk.
          await chain.invoke(`turn ${i} ${randomBytes(45_000).toString("base64")}`, config).then(
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
        const message = (failure as { cause: Error }).cause.message;
        console.log(`${kind.name} on a full disk: ${resolved} turns stored, then ${outcome} (${message.slice(0, 90)}); the server ${died ? "died" : "lived"}`);
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
