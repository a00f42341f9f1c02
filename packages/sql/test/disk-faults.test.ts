import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import { filesHolding, onSmallDisk, startPostgres } from "@memoria/testkit/servers";
import { writeSentinelMemory, writeSentinelTurn } from "@memoria/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStore, createSqliteStore } from "../src/index.js";

const root = mkdtempSync(join(tmpdir(), "memoria-sqlite-faults-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("sqlite on a full disk", () => {
  it("rejects the turn that does not fit with a typed error, keeps every turn it resolved, and the next turn works once space is freed", async (context) => {
    await onSmallDisk(
      1024 * 1024,
      (reason) => context.skip(reason),
      async (diskPath) => {
        const filler = join(diskPath, "filler");
        writeFileSync(filler, Buffer.alloc(300 * 1024));
        const store = createSqliteStore({ path: join(diskPath, "history.db") });
        const chain = new RunnableWithMessageHistory({ store, lockOptions: { ttlMs: 1_000 }, runnable: RunnableLambda.from(() => "ok") });
        const config = { configurable: { sessionId: "full" } };
        let resolved = 0;
        let failure: unknown;
        for (let i = 0; i < 40 && !failure; i++) {
          await chain.invoke(`turn ${i} ${"x".repeat(60_000)}`, config).then(
            () => resolved++,
            (error: unknown) => {
              failure = error;
            },
          );
        }
        expect(resolved).toBeGreaterThan(0);
        expect(failure).toMatchObject({ code: "SAVE_FAILED", outcome: "not-stored", cause: { code: "STORE_UNAVAILABLE" } });
        expect((failure as { cause: Error }).cause.message).toContain("disk is full");
        expect(await store.count({ sessionId: "full" })).toBe(2 * resolved);
        rmSync(filler);
        await expect(chain.invoke("small again", config)).resolves.toBe("ok");
        expect(await store.count({ sessionId: "full" })).toBe(2 * resolved + 2);
        await store.close();
      },
    );
  });
});

describe("sqlite erasure", () => {
  it("after delete({ userId }), no byte of the user's messages, derived state or long-term memory is left in the database, its WAL or its lock file", async () => {
    const dir = join(root, "erase");
    const store = createSqliteStore({ path: join(dir, "history.db") });
    const sentinel = `SENTINEL-${crypto.randomUUID()}`;
    for (let c = 0; c < 3; c++) {
      const key = { userId: "ada", conversationId: `c${c}` };
      await writeSentinelTurn(store, key, sentinel);
    }
    await writeSentinelMemory(store, { userId: "ada" }, sentinel);
    await store.append({ userId: "bob", conversationId: "c0" }, [new HumanMessage("bob stays")]);
    expect(filesHolding(dir, sentinel).length).toBeGreaterThan(0);
    expect(await store.delete({ userId: "ada" })).toBe(4); // three conversations and the scope record
    expect(filesHolding(dir, sentinel)).toEqual([]);
    expect(filesHolding(dir, "bob stays").length).toBeGreaterThan(0);
    expect(existsSync(join(dir, "history.db-wal")) ? statSync(join(dir, "history.db-wal")).size : 0).toBe(0);
    expect((await store.read({ userId: "bob", conversationId: "c0" })).map((m) => m.content)).toEqual(["bob stays"]);
    await store.close();
  });

  it("creates its database and lock files readable by their owner only", async () => {
    const dir = join(root, "private");
    const store = createSqliteStore({ path: join(dir, "history.db") });
    await store.append({ sessionId: "s" }, [new HumanMessage("private")]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(dir)) expect([name, statSync(join(dir, name)).mode & 0o777]).toEqual([name, 0o600]);
    await store.close();
  });
});

describe("postgres erasure", () => {
  it("after delete({ userId }) and the documented VACUUM FULL + CHECKPOINT, no table file holds the user's messages or state", async (context) => {
    if (process.getuid?.() !== 0) return context.skip("scanning the server's data folder needs root (the server runs as postgres)");
    const server = await startPostgres();
    const pg = (await import("pg")).default;
    const admin = new pg.Client({ connectionString: server.url });
    try {
      await admin.connect();
      const store = createPostgresStore({ connectionString: server.url });
      const sentinel = `SENTINEL-${crypto.randomUUID()}`;
      const key = { userId: "ada", conversationId: "c1" };
      await writeSentinelTurn(store, key, sentinel);
      await store.append({ userId: "bob", conversationId: "c1" }, [new HumanMessage("bob stays")]);
      const tableFiles = () => filesHolding(join(server.dataDir, "base"), sentinel);
      await admin.query("CHECKPOINT");
      expect(tableFiles().length).toBeGreaterThan(0);
      expect(await store.delete({ userId: "ada" })).toBe(1);
      await admin.query("CHECKPOINT");
      expect(tableFiles().length).toBeGreaterThan(0); // deleted rows stay in the heap until vacuumed
      for (const sql of POSTGRES_ERASE_SQL) await admin.query(sql);
      expect(tableFiles()).toEqual([]);
      expect((await store.read({ userId: "bob", conversationId: "c1" })).map((m) => m.content)).toEqual(["bob stays"]);
      await store.close();
    } finally {
      await admin.end().catch(() => undefined);
      await server.stop();
    }
  }, 60_000);
});

/** What docs/faults-and-erasure.md tells PostgreSQL users to run after an erasure. */
const POSTGRES_ERASE_SQL = [
  "VACUUM FULL memoria_messages, memoria_state, memoria_turns, memoria_session_fields, memoria_sessions, memoria_locks",
  "CHECKPOINT",
];
