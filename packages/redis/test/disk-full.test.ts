import { expectFullDiskSurvived } from "@memoria/testkit";
import { onSmallDisk, startRedis } from "@memoria/testkit/servers";
import { describe, it } from "vitest";
import { createRedisStore } from "../src/index.js";

/*
 * Redis's disk filled under a conversation, its append-only file on a real tmpfs
 * (`expectFullDiskSurvived` says what must hold), with every write fsynced (as the
 * tests' servers run: the server exits when the write fails, and is started again
 * from its file) and once a second (Redis's default with AOF on: the server lives and
 * refuses every write, MISCONF, so the next turn is refused as it takes its lock).
 */
describe.each(["always", "everysec"])("redis (appendfsync %s) on a full disk", (fsync) => {
  it("rejects the turn that does not fit with a typed error, keeps every turn it resolved, and works again once space is freed", {
    timeout: 120_000,
  }, async (context) => {
    await onSmallDisk(
      32 * 1024 * 1024,
      (reason) => context.skip(reason),
      async (diskPath) => {
        const server = await startRedis(["--appendfsync", fsync], { under: diskPath });
        const store = createRedisStore({ url: server.url, operationTimeoutMs: 5_000 });
        try {
          await expectFullDiskSurvived(diskPath, {
            name: `redis (appendfsync ${fsync})`,
            store,
            get pid() {
              return server.pid;
            },
            startAgain: () => server.restart(),
            mayRefuseAtStart: true,
          });
        } finally {
          await store.close();
          await server.stop();
        }
      },
    );
  });
});
