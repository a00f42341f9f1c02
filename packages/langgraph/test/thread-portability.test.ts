import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AIMessage, type BaseMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { type HistoryStore, serializeMessage } from "@memoria/core";
import { createFileStore } from "@memoria/file";
import { encryptStore } from "@memoria/privacy";
import { createRedisStore } from "@memoria/redis";
import { createSqliteStore } from "@memoria/sql";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { MemoriaSaver } from "../src/index.js";

// A LangGraph thread is a memoria session, so memoria's own tools carry it: `memoria
// migrate` to another engine (encrypting on the way), `memoria export` and `import`.
// Its checkpoints point at positions of the session's messages; these check that
// every copy gives back the same history, branches and removals included.

const cli = join(import.meta.dirname, "../../cli/dist/bin.js");
const memoria = (...args: string[]) => promisify(execFile)(process.execPath, [cli, ...args]);
const dir = mkdtempSync(join(tmpdir(), "memoria-langgraph-portable-"));
const source = `sqlite:${join(dir, "source.db")}`;
const keys = { activeKeyId: "k1", keys: { k1: randomBytes(32).toString("base64") } };
const keysFile = join(dir, "keys.json");

function echoGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => {
      const last = state.messages.at(-1) as BaseMessage;
      const reply = new AIMessage({ content: `echo: ${last.content}`, id: `ai-${last.id}` });
      // Past six messages, all but the last two are removed: later values are ranges with gaps.
      if (state.messages.length < 6) return { messages: [reply] };
      return { messages: [...state.messages.slice(0, -2).map((message) => new RemoveMessage({ id: message.id as string })), reply] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer });
}

async function historyOf(store: HistoryStore) {
  const saver = new MemoriaSaver({ store });
  const out: unknown[] = [];
  for await (const snapshot of echoGraph(saver).getStateHistory({ configurable: { thread_id: "portable" } })) {
    out.push([snapshot.config.configurable?.checkpoint_id, snapshot.next, (snapshot.values.messages ?? []).map((m: BaseMessage) => serializeMessage(m))]);
  }
  await saver.releaseLocks();
  return out;
}

let expected: unknown[];
beforeAll(async () => {
  writeFileSync(keysFile, JSON.stringify(keys));
  const store = createSqliteStore({ path: source.slice("sqlite:".length) });
  const saver = new MemoriaSaver({ store });
  const graph = echoGraph(saver);
  const config = { configurable: { thread_id: "portable" } };
  for (let n = 1; n <= 5; n += 1) await graph.invoke({ messages: [new HumanMessage({ content: `q${n}`, id: `h${n}` })] }, config);
  let past: { configurable?: Record<string, unknown> } | undefined;
  for await (const snapshot of graph.getStateHistory(config)) if (snapshot.values.messages?.length === 4 && snapshot.next.length === 0) past = snapshot.config;
  await graph.invoke({ messages: [new HumanMessage({ content: "branch", id: "hb" })] }, past!);
  await saver.releaseLocks();
  expected = await historyOf(store);
  await store.close();
  expect(expected.length).toBeGreaterThan(10);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a LangGraph thread carried by memoria's own tools", () => {
  it("memoria migrate to Redis, encrypting on the way: the same history", { timeout: 60_000 }, async () => {
    const prefix = `portable${Date.now()}:`;
    await memoria("migrate", "--from", source, "--to", `${inject("redisUrl")}?prefix=${encodeURIComponent(prefix)}`, "--to-keys", keysFile);
    const migrated = encryptStore(createRedisStore({ url: inject("redisUrl"), keyPrefix: prefix }), {
      keys: { k1: Buffer.from(keys.keys.k1, "base64") },
      activeKeyId: "k1",
    });
    try {
      expect(await historyOf(migrated)).toEqual(expected);
    } finally {
      await migrated.delete({ threadId: "portable" });
      await migrated.close();
    }
  });

  it("memoria export, then import into a file store: the same history", { timeout: 60_000 }, async () => {
    const file = join(dir, "thread.jsonl");
    await memoria("export", "--store", source, "--where", "threadId=portable", "--out", file);
    const targetDir = join(dir, "files");
    await memoria("import", file, "--store", `file:${targetDir}`);
    const store = createFileStore({ directory: targetDir });
    try {
      expect(await historyOf(store)).toEqual(expected);
    } finally {
      await store.close();
    }
  });
});
