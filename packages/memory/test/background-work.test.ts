import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import { afterAll, describe, expect, it } from "vitest";
import { combineMemory, windowMemory } from "../src/index.js";
import { factMemory } from "../src/long-term.js";
import { ScriptedLLM, memoryModel, recordingChat } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "memoria-background-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** How many extraction prompts held `text` among the new messages. */
function extractedTimes(prompts: string[], text: string): number {
  return prompts.filter((prompt) => prompt.startsWith("You keep long-term memory") && prompt.includes(`Human: ${text}`)).length;
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const line = seen.split("\n").find((l) => pattern.test(l));
      if (line) resolve(line);
    });
    child.on("exit", (code) => reject(new Error(`child exited (${code}) before "${pattern}"; it printed:\n${seen}`)));
  });
}

describe("background work", () => {
  it("a process killed while extracting loses nothing and repeats nothing: the next process does exactly what was left", async () => {
    const path = join(root, "crash.db");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "fixtures/background-child.ts"), path, "Ada lives in London.", "Ada works at Hold Corp."],
      {
        cwd: import.meta.dirname,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    await waitForLine(child, /^extracting: Ada works at Hold Corp\./);
    const exited = new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once("exit", resolve)));
    child.kill("SIGKILL");
    await exited;
    expect(child.signalCode).toBe("SIGKILL");

    const store = createSqliteStore({ path });
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"] });
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement)).toEqual(["Ada lives in London"]);
    expect(await store.count({ userId: "ada", conversationId: "c2" })).toBe(2); // the turn was saved before the kill
    await facts.resume(store, { userId: "ada" });
    expect(extractedTimes(extractor.prompts, "Ada works at Hold Corp.")).toBe(1);
    expect(extractedTimes(extractor.prompts, "Ada lives in London.")).toBe(0);
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement)).toEqual(["Ada lives in London", "Ada works at Hold Corp"]);
    await facts.resume(store, { userId: "ada" });
    expect(extractor.extractions()).toHaveLength(1);
    await store.close();
  }, 120_000); // starts a process through tsx: 16 s in a full local run, under 4x the 60 s it had

  it("a restarted process catches up on the scope's next turn without being told", async () => {
    const path = join(root, "restart.db");
    const first = createSqliteStore({ path });
    const chain = (store: typeof first, memory: ReturnType<typeof combineMemory>) =>
      new RunnableWithMessageHistory({ runnable: recordingChat().model, store, sessionFields: ["userId", "conversationId"], memory });
    // The first process saved a turn with no long-term memory running (as if it died before the work began).
    await chain(first, combineMemory(windowMemory({ k: 2 }))).invoke([new HumanMessage("Ada lives in Bergen.")], {
      configurable: { userId: "ada", conversationId: "c1" },
    });
    await first.close();
    const store = createSqliteStore({ path });
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"] });
    await chain(store, combineMemory(facts, windowMemory({ k: 2 }))).invoke([new HumanMessage("Ada works at Opera House.")], {
      configurable: { userId: "ada", conversationId: "c2" },
    });
    await facts.idle();
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement).sort()).toEqual(["Ada lives in Bergen", "Ada works at Opera House"]);
    await store.close();
  });

  it("several processes on one store never extract the same turn twice", async () => {
    const path = join(root, "shared.db");
    const extractor = memoryModel();
    const workers = [0, 1, 2].map(() => {
      const store = createSqliteStore({ path });
      const facts = factMemory({ model: extractor.model, scope: ["userId"] });
      const chain = new RunnableWithMessageHistory({
        runnable: recordingChat().model,
        store,
        sessionFields: ["userId", "conversationId"],
        memory: combineMemory(facts, windowMemory({ k: 2 })),
      });
      return { store, facts, chain };
    });
    const texts = Array.from({ length: 12 }, (_, i) => `Person${"abcdefghijkl"[i]} lives in City${"abcdefghijkl"[i]}.`);
    await Promise.all(
      texts.map((text, i) => {
        const worker = workers[i % workers.length] as (typeof workers)[number];
        return worker.chain.invoke([new HumanMessage(text)], { configurable: { userId: "ada", conversationId: `c${i % 4}` } });
      }),
    );
    await Promise.all(workers.map((worker) => worker.facts.idle()));
    for (const text of texts) expect([text, extractedTimes(extractor.prompts, text)]).toEqual([text, 1]);
    const stored = await workers[0]?.facts.facts(workers[0].store, { userId: "ada" });
    expect(stored?.length).toBe(12);
    for (const worker of workers) await worker.store.close();
  }, 60_000);
});

describe("a background failure, reported by default", () => {
  it("is one process warning per cause, naming the memory and its model, never a stack trace per turn", async () => {
    const warnings: Error[] = [];
    const collect = (warning: Error) => warnings.push(warning);
    process.on("warning", collect);
    const errors: unknown[][] = [];
    const consoleError = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      // A model that answers in prose where the extraction asks for JSON.
      const prose = Object.assign(new ScriptedLLM(["Sure! Ada lives in Lisbon, I think."]), { model: "prose-model-1" });
      const facts = factMemory({ model: prose, scope: ["userId"] });
      const store = createSqliteStore({ path: ":memory:" });
      const { model } = recordingChat();
      const chat = new RunnableWithMessageHistory({
        runnable: model,
        store,
        sessionFields: ["userId", "conversationId"],
        memory: combineMemory(facts, windowMemory({ k: 2 })),
      });
      for (let turn = 0; turn < 3; turn += 1) {
        await chat.invoke([new HumanMessage(`Ada lives in Lisbon, turn ${turn}`)], { configurable: { userId: "ada", conversationId: "c1" } });
        await facts.idle();
      }
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      const ours = warnings.filter((warning) => (warning as { code?: string }).code === "MEMORIA_BACKGROUND_WORK");
      expect(ours).toHaveLength(1);
      expect(ours[0]?.message).toMatch(/^memoria: the work of the "facts" memory after a turn failed \(model prose-model-1\): \w+/);
      expect(ours[0]?.message.split("\n")).toHaveLength(1);
      expect(errors).toEqual([]);
      await store.close();
    } finally {
      process.off("warning", collect);
      console.error = consoleError;
    }
  });
});
