import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { everyKindOfMessage, fieldsOf } from "@memoria/testkit";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { openStore } from "../src/store-url.js";
import { memoria } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-lc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every kind of message LangChain's stores can hold (its stored-message mapping has no FunctionMessage class to give back). */
const original = () => everyKindOfMessage().filter((m) => m.getType() !== "function");

async function readBack(url: string, key: Record<string, string>): Promise<BaseMessage[]> {
  const { store } = await openStore(url);
  try {
    return await store.read(key);
  } finally {
    await store.close();
  }
}

describe("memoria import: LangChain's own histories, written by LangChain's classes", () => {
  it("RedisChatMessageHistory (ioredis): every field intact, and a second import adds nothing", async () => {
    const { RedisChatMessageHistory } = await import("@langchain/community/stores/message/ioredis");
    const client = new Redis(inject("redisUrl"));
    const tag = crypto.randomUUID();
    try {
      for (const n of [1, 2]) {
        const history = new RedisChatMessageHistory({ sessionId: `lc:${tag}:s${n}`, client });
        await history.addMessages(original());
      }
      const target = `sqlite:${join(dir, "from-redis.db")}`;
      const args = ["import", inject("redisUrl"), "--store", target, "--pattern", `lc:${tag}:*`, "--strip-prefix", `lc:${tag}:`];
      const first = await memoria(args);
      expect(first.stderr).toBe("");
      expect(first.stdout).toBe(`imported 2 sessions: ${2 * original().length} messages appended, 0 already there\n`);
      expect((await memoria(args)).stdout).toBe(`imported 2 sessions: 0 messages appended, ${2 * original().length} already there\n`);
      for (const n of [1, 2]) expect((await readBack(target, { sessionId: `s${n}` })).map(fieldsOf)).toEqual(original().map(fieldsOf));
    } finally {
      client.disconnect();
    }
  });

  it("PostgresChatMessageHistory: every field intact", async () => {
    const { PostgresChatMessageHistory } = await import("@langchain/community/stores/message/postgres");
    const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 2 });
    const table = `lc_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    try {
      const history = new PostgresChatMessageHistory({ sessionId: "ada-1", pool, tableName: table });
      await history.addMessages(original());
      const target = `sqlite:${join(dir, "from-postgres.db")}`;
      const imported = await memoria(["import", inject("databaseUrl"), "--store", target, "--table", table]);
      expect(imported.stdout).toBe(`imported 1 session: ${original().length} messages appended, 0 already there\n`);
      expect((await readBack(target, { sessionId: "ada-1" })).map(fieldsOf)).toEqual(original().map(fieldsOf));
    } finally {
      await pool.end();
    }
  });

  it("FileSystemChatMessageHistory: every field intact, users kept as userId, context as metadata and title", async () => {
    const { FileSystemChatMessageHistory } = await import("@langchain/community/stores/message/file_system");
    const filePath = join(dir, "history.json");
    const history = new FileSystemChatMessageHistory({ sessionId: "trip", userId: "ada", filePath });
    await history.addMessages(original());
    await history.setContext({ title: "Trip planning", tags: ["travel"] });
    const target = `sqlite:${join(dir, "from-file.db")}`;
    const imported = await memoria(["import", filePath, "--store", target]);
    expect(imported.stdout).toBe(`imported 1 session: ${original().length} messages appended, 0 already there\n`);
    const key = { userId: "ada", sessionId: "trip" };
    expect((await readBack(target, key)).map(fieldsOf)).toEqual(original().map(fieldsOf));
    const { store } = await openStore(target);
    try {
      expect(await store.info!(key)).toMatchObject({ title: "Trip planning", metadata: { title: "Trip planning", tags: ["travel"] } });
    } finally {
      await store.close();
    }
  });

  it("says what is wrong with a source that is not LangChain's", async () => {
    const bad = await memoria(["import", join(dir, "missing.json"), "--store", `sqlite:${join(dir, "x.db")}`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^memoria: cannot read .*missing\.json as LangChain's file history: ENOENT/);
  });
});
