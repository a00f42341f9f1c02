import type { HistoryStore } from "@memoria/core";
import { expectFullDiskSurvived } from "@memoria/testkit";
import { type RunningPostgres, onSmallDisk, startMariadb, startPostgres } from "@memoria/testkit/servers";
import { describe, it } from "vitest";
import { createMysqlStore, createPostgresStore } from "../src/index.js";

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
 * A server's disk filled under a conversation, the whole server on a real tmpfs
 * (`expectFullDiskSurvived` says what must hold). Seen here: PostgreSQL refuses the
 * statement that cannot extend a file (SQLSTATE 53100) and lives on; MariaDB 10.11's
 * InnoDB cannot extend the table's file (error 28) and the server aborts, cutting
 * every connection, and is started again once space is freed.
 */
describe.each(kinds)("$name on a full disk", (kind) => {
  it("rejects the turn that does not fit with a typed error, keeps every turn it resolved, and works again once space is freed", {
    timeout: 180_000,
  }, async (context) => {
    // A fresh server takes about 40 MB (PostgreSQL) or 80 MB (MariaDB's system tablespace):
    // 160 MB leaves room to start, and to fill.
    await onSmallDisk(
      160 * 1024 * 1024,
      (reason) => context.skip(reason),
      async (diskPath) => {
        const server = await kind.start(diskPath);
        const store = kind.store(server.url);
        try {
          await store.ready();
          await expectFullDiskSurvived(diskPath, {
            name: kind.name,
            store,
            get pid() {
              return server.pid;
            },
            startAgain: () => server.crash(),
            message: /out of disk|unreachable/,
          });
        } finally {
          await store.close();
          await server.stop();
        }
      },
    );
  });
});
