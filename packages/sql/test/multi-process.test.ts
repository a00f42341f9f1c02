import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { HistoryStore } from "@memoria/core";
import { serializedTurnProblems } from "@memoria/testkit";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createMysqlStore, createPostgresStore, createSqliteStore } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-mp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const writerScript = join(import.meta.dirname, "fixtures", "turn-writer.ts");
const TURNS = 15;

function writer(engine: string, target: string, sessionId: string, name: string) {
  return promisify(execFile)(process.execPath, ["--import", "tsx", writerScript, engine, target, sessionId, name, String(TURNS)], {
    cwd: import.meta.dirname,
  });
}

async function expectSerializedTurns(store: HistoryStore, sessionId: string) {
  expect(serializedTurnProblems(await store.read({ sessionId }), 2 * TURNS)).toEqual([]);
}

describe("two processes writing one session", () => {
  it("sqlite: one file, nothing lost or duplicated, turns never interleaved", async () => {
    const path = join(dir, "shared.db");
    const sessionId = `mp-${crypto.randomUUID()}`;
    await Promise.all([writer("sqlite", path, sessionId, "alpha"), writer("sqlite", path, sessionId, "beta")]);
    const store = createSqliteStore({ path });
    await expectSerializedTurns(store, sessionId);
    await store.close();
  });

  it("postgres: one database, nothing lost or duplicated, turns never interleaved", async () => {
    const url = inject("databaseUrl");
    const sessionId = `mp-${crypto.randomUUID()}`;
    await Promise.all([writer("postgres", url, sessionId, "alpha"), writer("postgres", url, sessionId, "beta")]);
    const store = createPostgresStore({ connectionString: url });
    await expectSerializedTurns(store, sessionId);
    await store.close();
  });

  it("mysql (MariaDB): one database, nothing lost or duplicated, turns never interleaved", async () => {
    const uri = inject("mysqlUrl");
    const sessionId = `mp-${crypto.randomUUID()}`;
    await Promise.all([writer("mysql", uri, sessionId, "alpha"), writer("mysql", uri, sessionId, "beta")]);
    const store = createMysqlStore({ uri });
    await expectSerializedTurns(store, sessionId);
    await store.close();
  });
});
