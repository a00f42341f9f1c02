import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { HumanMessage } from "@langchain/core/messages";
import { MemoriaError, RunnableWithMessageHistory } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import { afterAll, describe, expect, it } from "vitest";
import { RunnableLambda } from "@langchain/core/runnables";
import { encryptStore } from "@memoria/privacy";
import { testKeys } from "@memoria/testkit";
import {
  BUDGET_STATE,
  BudgetSpentError,
  budgetKeyOf,
  bufferMemory,
  combineMemory,
  memoryBudget,
  summaryBufferMemory,
  summaryMemory,
  windowMemory,
  withTitles,
} from "../src/index.js";
import { factMemory, workingMemory } from "../src/long-term.js";
import { memoryModel, recordingChat, recordingSummarizer } from "./helpers.js";

const run = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), "memoria-budget-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DAY = 86_400_000;

/** Collects the process warnings of one code while `work` runs. */
async function warningsDuring(code: string, work: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const collect = (warning: Error & { code?: string }) => {
    if (warning.code === code) seen.push(warning.message);
  };
  process.on("warning", collect);
  try {
    await work();
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off("warning", collect);
  }
  return seen;
}

describe("memoryBudget", () => {
  it("spends a scope's budget exactly once across processes: as many calls as allowed run, every other one is refused", async () => {
    const path = join(root, "shared.db");
    createSqliteStore({ path }).close(); // the schema made once, before the processes race to open it
    const child = join(import.meta.dirname, "fixtures/budget-child.ts");
    const answers = await Promise.all(
      [0, 1, 2].map(() => run(process.execPath, ["--import", "tsx", child, path, "12", "10"], { cwd: import.meta.dirname, timeout: 100_000 })),
    );
    const counts = answers.map(({ stdout }) => JSON.parse(stdout.trim()) as { ran: number; refused: number });
    expect(counts.reduce((sum, c) => sum + c.ran, 0)).toBe(12);
    expect(counts.reduce((sum, c) => sum + c.refused, 0)).toBe(18);
    const store = createSqliteStore({ path });
    const spent = await memoryBudget({ scope: ["userId"], calls: 12 }).spent(store, { userId: "ada" });
    expect(spent).toMatchObject({ calls: 12, refused: 18, tokens: 1_200, byWork: { facts: { calls: 12, tokens: 1_200 } } });
    expect(spent.until - spent.since).toBe(DAY);
    // The budget is kept with the user and erased with them.
    await store.delete({ userId: "ada" });
    expect((await memoryBudget({ scope: ["userId"] }).spent(store, { userId: "ada" })).calls).toBe(0);
    await store.close();
  }, 120_000);

  it("spent, fact extraction waits (said once, typed), the turn goes on with what it knows, and the next period catches up", async () => {
    let now = Date.UTC(2026, 11, 2, 12);
    const budget = memoryBudget({ scope: ["userId"], calls: 2, now: () => now });
    const store = createSqliteStore({ path: join(root, "facts.db") });
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"], budget, batchSize: 2 });
    const chat = recordingChat();
    const chain = new RunnableWithMessageHistory({
      runnable: chat.model,
      store,
      sessionFields: ["userId", "conversationId"],
      memory: combineMemory(facts, windowMemory({ k: 2 })),
    });
    const say = (userId: string, text: string) => chain.invoke([new HumanMessage(text)], { configurable: { userId, conversationId: "c1" } });
    const warnings = await warningsDuring("MEMORIA_BUDGET_SPENT", async () => {
      for (const text of ["Ada lives in Lisbon.", "Ada works at Tide Labs.", "Ada moved to Porto.", "Ada works at Harbour Bank."]) {
        await say("ada", text);
        await facts.idle();
      }
    });
    expect(extractor.extractions()).toHaveLength(2);
    expect((await facts.facts(store, { userId: "ada" })).map((f) => f.statement)).toEqual(["Ada lives in Lisbon", "Ada works at Tide Labs"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"facts" memory's work is not done: The memory budget is spent: 2 of 2 model calls/);
    // The turn still answered with what was known, without a model call.
    expect(chat.lastSystem()).toContain("Ada works at Tide Labs");
    expect(await budget.spent(store, { userId: "ada" })).toMatchObject({ calls: 2, refused: 2 });
    // Another user's budget is their own.
    await say("bob", "Bob lives in Oslo.");
    await facts.idle();
    expect((await facts.facts(store, { userId: "bob" })).map((f) => f.statement)).toEqual(["Bob lives in Oslo"]);
    // The next day, what waited is extracted once: nothing lost, nothing repeated.
    now += DAY;
    await facts.resume(store, { userId: "ada" });
    expect((await facts.facts(store, { userId: "ada" }, { current: true })).map((f) => f.statement)).toEqual([
      "Ada lives in Porto",
      "Ada works at Harbour Bank",
    ]);
    expect(extractor.extractions()).toHaveLength(5); // Ada's two, Bob's one, then the two waiting turns (a batch each)
    expect(await budget.spent(store, { userId: "ada" })).toMatchObject({ calls: 2, refused: 0 });
    await store.close();
  });

  it("a refused call is BudgetSpentError, code BUDGET_SPENT, naming the work and when it starts again; the model is not called", async () => {
    const budget = memoryBudget({ scope: ["userId"], tokens: 50, now: () => Date.UTC(2026, 11, 2, 12) });
    const store = createSqliteStore({ path: ":memory:" });
    let called = 0;
    const call = async () => {
      called++;
      return "an answer of some length";
    };
    await budget.spend(store, { userId: "ada" }, { name: "title", prompt: "p".repeat(300) }, call); // 81 estimated tokens
    const error = await budget.spend(store, { userId: "ada" }, { name: "title", prompt: "p" }, call).catch((e: unknown) => e);
    expect(BudgetSpentError.isInstance(error) && MemoriaError.hasCode(error, "BUDGET_SPENT")).toBe(true);
    expect(error).toMatchObject({ work: "title", limit: "tokens", resetsAt: Date.UTC(2026, 11, 3) });
    expect(called).toBe(1);
    await store.close();
  });

  it("spent, a summary stays as it was and takes in what it missed in the next period", async () => {
    let now = Date.UTC(2026, 11, 2, 12);
    const budget = memoryBudget({ scope: ["userId"], calls: 1, now: () => now });
    const store = createSqliteStore({ path: ":memory:" });
    const summarizer = recordingSummarizer();
    const chain = new RunnableWithMessageHistory({
      runnable: recordingChat().model,
      store,
      sessionFields: ["userId", "conversationId"],
      memory: summaryMemory({ model: summarizer.model, budget }),
    });
    const config = { configurable: { userId: "ada", conversationId: "c1" } };
    await chain.invoke([new HumanMessage("Alpha one")], config);
    await chain.invoke([new HumanMessage("Beta two")], config);
    expect(summarizer.calls).toHaveLength(1);
    expect(((await store.getState({ userId: "ada", conversationId: "c1" }, "summary")) as { summary: string }).summary).toBe("Alpha noted");
    now += DAY;
    await chain.invoke([new HumanMessage("Gamma three")], config);
    expect(((await store.getState({ userId: "ada", conversationId: "c1" }, "summary")) as { summary: string }).summary).toBe("Alpha noted Beta noted");
    await store.close();
  });

  it("spent, a session gets no title, a summary buffer keeps the newest turns that fit, a profile waits; the model is not asked", async () => {
    let now = Date.UTC(2026, 11, 2, 12);
    const budget = memoryBudget({ scope: ["userId"], calls: 0, now: () => now });
    const store = createSqliteStore({ path: ":memory:" });
    const asked: string[] = [];
    const model = RunnableLambda.from((prompt: string) => {
      asked.push(prompt);
      return "Ada's profile";
    });
    const titled = withTitles(bufferMemory(), { model, budget });
    const profile = workingMemory({ model, scope: ["userId"], budget });
    const buffered = summaryBufferMemory({ model, maxTokens: 12, budget });
    const chain = (memory: Parameters<typeof combineMemory>[0]) =>
      new RunnableWithMessageHistory({ runnable: recordingChat().model, store, sessionFields: ["userId", "conversationId"], memory });
    const titles = { userId: "ada", conversationId: "titles" };
    await chain(combineMemory(titled, profile)).invoke([new HumanMessage("Ada lives in Lisbon.")], { configurable: titles });
    await Promise.all([titled.idle(), profile.idle()]);
    expect((await store.info(titles))?.title).toBeUndefined();
    expect(await profile.profile(store, { userId: "ada" })).toBeUndefined();
    const turns = { userId: "ada", conversationId: "buffer" };
    const chat = recordingChat();
    const bufferChain = new RunnableWithMessageHistory({ runnable: chat.model, store, sessionFields: ["userId", "conversationId"], memory: buffered });
    for (const text of ["one two three four", "five six seven eight", "nine ten eleven twelve"])
      await bufferChain.invoke([new HumanMessage(text)], { configurable: turns });
    const sent = chat.prompts.at(-1)?.map((m) => String(m.content)) ?? [];
    expect(sent.at(-1)).toBe("nine ten eleven twelve");
    expect(sent).not.toContain("one two three four"); // past maxTokens, left out of the prompt (not of the store) until it can be folded
    expect(await store.count(turns)).toBe(6);
    expect(asked).toEqual([]);
    expect((await budget.spent(store, { userId: "ada" })).refused).toBeGreaterThanOrEqual(3);
    // A budget of no calls is spent in every period: catching up asks nothing either.
    now += DAY;
    await profile.resume(store, { userId: "ada" });
    expect(asked).toEqual([]);
    await store.close();
  });

  it("counts through encryptStore: the record is sealed beneath, the budget holds, and it is erased with the user", async () => {
    const inner = createSqliteStore({ path: join(root, "sealed.db") });
    const store = encryptStore(inner, { keys: { A: testKeys().A }, activeKeyId: "A" });
    const budget = memoryBudget({ scope: ["userId"], calls: 1 });
    await budget.spend(store, { userId: "ada" }, { name: "facts", prompt: "p".repeat(40) }, async () => "ok");
    await expect(budget.spend(store, { userId: "ada" }, { name: "facts", prompt: "p" }, async () => "ok")).rejects.toMatchObject({ code: "BUDGET_SPENT" });
    expect(await budget.spent(store, { userId: "ada" })).toMatchObject({ calls: 1, refused: 1, tokens: 11 });
    const beneath = await inner.getState(budgetKeyOf({ userId: "ada" }), BUDGET_STATE).then(
      (value) => JSON.stringify(value),
      (error: { code?: string }) => String(error.code),
    );
    expect(beneath).not.toContain('"refused"');
    await store.delete({ userId: "ada" });
    expect((await budget.spent(store, { userId: "ada" })).calls).toBe(0);
    await store.close();
  });

  it("refuses a budget it cannot keep", () => {
    expect(() => memoryBudget({ scope: [] })).toThrow(/scope must be a non-empty array/);
    expect(() => memoryBudget({ scope: ["userId"], calls: -1 })).toThrow(/calls must be a whole number >= 0/);
    expect(() => memoryBudget({ scope: ["userId"], periodMs: 0 })).toThrow(/periodMs must be/);
  });
});
