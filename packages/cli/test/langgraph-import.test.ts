import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { serializeMessage } from "@memoria/core";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { MemoriaSaver } from "@memoria/langgraph";
import { afterAll, describe, expect, inject, it } from "vitest";

/** `memoria import --from langgraph-sqlite | langgraph-postgres`, run as a user runs the command. */
const bin = join(import.meta.dirname, "..", "src", "bin.ts");
const run = (args: string[]) => promisify(execFile)(process.execPath, ["--import", "tsx", bin, ...args]);

/** A graph whose one node echoes the last message, with a stable id per reply. */
function echoGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => ({
      messages: [new AIMessage({ content: `echo: ${(state.messages.at(-1) as BaseMessage).content}`, id: `ai-${state.messages.length}` })],
    }))
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer });
}
const dir = mkdtempSync(join(tmpdir(), "memoria-langgraph-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two threads of three turns each, written by LangGraph's own saver. */
async function writeThreads(saver: BaseCheckpointSaver): Promise<void> {
  const graph = echoGraph(saver);
  for (const threadId of ["t1", "t2"]) {
    for (let n = 1; n <= 3; n += 1)
      await graph.invoke({ messages: [new HumanMessage({ content: `${threadId} ${n}`, id: `${threadId}-${n}` })] }, { configurable: { thread_id: threadId } });
  }
}

/** A thread's messages as a graph over the saver sees them. */
async function messagesOf(saver: BaseCheckpointSaver, threadId: string) {
  const state = await echoGraph(saver).getState({ configurable: { thread_id: threadId } });
  return (state.values.messages ?? []).map((message: BaseMessage) => serializeMessage(message));
}

const sources = [
  {
    name: "langgraph-sqlite",
    open: async () => {
      const path = join(dir, "langgraph.db");
      const saver = SqliteSaver.fromConnString(path);
      return { saver, source: path, extra: [] as string[], close: async () => (saver as unknown as { db: { close(): void } }).db.close() };
    },
    store: () => `sqlite:${join(dir, "from-sqlite.db")}`,
    memoria: () => createSqliteStore({ path: join(dir, "from-sqlite.db") }),
  },
  {
    name: "langgraph-postgres",
    open: async () => {
      const schema = `lg_import_${crypto.randomUUID().slice(0, 8)}`;
      const saver = PostgresSaver.fromConnString(inject("databaseUrl"), { schema });
      await saver.setup();
      return { saver, source: inject("databaseUrl"), extra: ["--schema", schema], close: () => saver.end() };
    },
    store: () => inject("databaseUrl"),
    memoria: () => createPostgresStore({ connectionString: inject("databaseUrl") }),
  },
];

describe.each(sources)("memoria import --from $name", ({ name, open, store, memoria }) => {
  it("copies every thread into the store as MemoriaSaver keeps it; run again, it stores nothing twice", { timeout: 120_000 }, async () => {
    const { saver, source, extra, close } = await open();
    await writeThreads(saver);
    const args = ["import", source, "--from", name, ...extra, "--store", store()];
    try {
      const first = await run(args);
      expect(first.stdout).toMatch(/^imported 2 threads: \d+ checkpoints, \d+ pending writes\n$/);
      const target = memoria();
      try {
        const imported = new MemoriaSaver({ store: target });
        for (const threadId of ["t1", "t2"]) {
          expect(await messagesOf(imported, threadId)).toEqual(await messagesOf(saver, threadId));
          expect(await target.count({ threadId })).toBe(6); // each message stored once, not once per checkpoint
        }
        expect((await run(args)).stdout).toBe(first.stdout);
        expect(await target.count({ threadId: "t1" })).toBe(6);
      } finally {
        await target.close();
      }
    } finally {
      await close();
    }
  });
});

it("names the source it cannot open, creates no file there, and imports nothing", async () => {
  const target = join(dir, "untouched.db");
  const failure = await run(["import", join(dir, "missing.db"), "--from", "langgraph-sqlite", "--store", `sqlite:${target}`]).catch(
    (error: { code: number; stderr: string }) => error,
  );
  expect(failure).toMatchObject({ code: 2 });
  expect((failure as { stderr: string }).stderr).toContain("missing.db as SqliteSaver's database");
  expect(existsSync(join(dir, "missing.db"))).toBe(false);
  const store = createSqliteStore({ path: target });
  expect((await store.list()).sessions).toEqual([]);
  await store.close();
});
