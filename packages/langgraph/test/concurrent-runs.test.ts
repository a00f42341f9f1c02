import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { BaseMessage } from "@langchain/core/messages";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { HistoryStore } from "@memoria/core";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { afterAll, describe, expect, inject, it } from "vitest";
import { MemoriaSaver } from "../src/index.js";

const writer = join(import.meta.dirname, "fixtures/busy-writer.ts");
const dir = mkdtempSync(join(tmpdir(), "memoria-langgraph-busy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TURNS = 6;
const stores = [
  {
    name: "SQLite",
    url: () => `sqlite:${join(dir, "busy.db")}`,
    open: (url: string): HistoryStore => createSqliteStore({ path: url.slice("sqlite:".length) }),
  },
  { name: "PostgreSQL", url: () => inject("databaseUrl"), open: (url: string): HistoryStore => createPostgresStore({ connectionString: url }) },
];

describe.each(stores)("two processes running turns on one thread at once, on $name", ({ url, open }) => {
  it("never fork it: every saved checkpoint builds on the one before, and every turn's question is kept", { timeout: 120_000 }, async () => {
    const threadId = `busy-${Date.now()}`;
    const run = (name: string) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", writer, JSON.stringify({ store: url(), threadId, name, turns: TURNS })]).then(
        ({ stdout }) => JSON.parse(stdout) as { refused: number },
      );
    await Promise.all([run("a"), run("b")]);

    const store = open(url());
    try {
      const saver = new MemoriaSaver({ store });
      const chain: CheckpointTuple[] = [];
      for await (const tuple of saver.list({ configurable: { thread_id: threadId, checkpoint_ns: "" } })) chain.push(tuple);
      for (const [i, tuple] of chain.entries()) {
        expect(tuple.parentConfig?.configurable?.checkpoint_id).toBe(chain[i + 1]?.config.configurable?.checkpoint_id);
      }
      const latest = await saver.getTuple({ configurable: { thread_id: threadId } });
      const ids = ((latest?.checkpoint.channel_values.messages ?? []) as BaseMessage[]).map((message) => message.id);
      for (const name of ["a", "b"]) for (let turn = 0; turn < TURNS; turn += 1) expect(ids).toContain(`${name}-${turn}`);
    } finally {
      await store.close();
    }
  });
});
