import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { MemoriaSaver } from "@memoria/langgraph";
import { createSqliteStore } from "@memoria/sql";
import { answerMemoryPrompt } from "@memoria/testkit";
import { type ChatCompletionReply, type ChatCompletionRequest, type OpenAICompatibleServer, startOpenAICompatibleServer } from "@memoria/testkit/servers";
import { createAgent, tool } from "langchain";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoriaMiddleware } from "@memoria/memory/agent";
import { factMemory, readFacts } from "@memoria/memory/long-term";
import { memoryTools } from "@memoria/memory/tools";

const dir = mkdtempSync(join(tmpdir(), "memoria-agent-"));
let server: OpenAICompatibleServer;

const textOf = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content ?? ""));
const call = (id: string, name: string, args: object): ChatCompletionReply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

/**
 * The model's side of the conversations, as a script: it remembers what it is
 * asked to, searches when asked what it knows, and forgets on request (first with
 * two bad ids, to see those answered as tool errors).
 */
function respond(request: ChatCompletionRequest): ChatCompletionReply {
  const background = answerMemoryPrompt(textOf(request.messages.at(-1)?.content));
  if (!request.tools?.length && background !== undefined) return { content: background };
  const lastUser = textOf(request.messages.findLast((message) => message.role === "user")?.content);
  const sinceUser = request.messages.slice(request.messages.findLastIndex((message) => message.role === "user") + 1);
  const results = sinceUser.filter((message) => message.role === "tool").map((message) => textOf(message.content));
  if (/remember that/i.test(lastUser)) {
    return results.length
      ? { content: "I will remember that." }
      : call("r1", "remember", { subject: "the user", statement: "The user is allergic to peanuts" });
  }
  if (/what am i allergic to/i.test(lastUser)) {
    if (results.length === 0) return call("s1", "search_memory", { query: "allergic" });
    return { content: /allergic to peanuts/.test(results[0] as string) ? "You are allergic to peanuts." : "I don't know." };
  }
  if (/^look up/i.test(lastUser)) return results.length ? { content: "Found it." } : call(`l${request.messages.length}`, "lookup", { item: lastUser });
  if (/forget/i.test(lastUser)) {
    if (results.length === 0) return call("fg1", "forget", { id: "peanuts" });
    if (results.length === 1) return call("fg2", "forget", { id: "f99" });
    if (results.length === 2) return call("fg3", "forget", { id: /\[(f\d+)\] The user is allergic/.exec(JSON.stringify(request.messages))?.[1] ?? "f0" });
    return { content: "Forgotten." };
  }
  return { content: `ok: ${lastUser}` };
}

beforeAll(async () => {
  server = await startOpenAICompatibleServer(respond);
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("an agent with memoria's tools and middleware (createAgent, ChatOpenAI, MemoriaSaver on SQLite)", () => {
  it("remembers in one conversation, finds it with its source and date in the next, forgets it, and a third no longer sees it", async () => {
    const store = createSqliteStore({ path: join(dir, "agent.db") });
    const model = new ChatOpenAI({ model: "gpt-test", apiKey: "k", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const facts = factMemory({ model, scope: ["userId"], structured: false, onError: (error) => console.error(error) });
    const agent = createAgent({
      model,
      tools: memoryTools({ store, scope: ["userId"] }),
      middleware: [memoriaMiddleware({ store, memory: facts, keyFields: ["userId"] })],
      checkpointer: new MemoriaSaver({ store, keyFields: ["userId"] }),
    });
    const run = async (thread: string, text: string) => {
      const from = server.requests.length;
      const state = await agent.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: thread, userId: "ada" } });
      await facts.idle();
      return { answer: state.messages.at(-1)?.text, bodies: server.requests.slice(from).filter((request) => request.tools?.length) };
    };

    const one = await run("c1", "Remember that I am allergic to peanuts.");
    expect(one.answer).toBe("I will remember that.");
    const [fact] = await readFacts(store, { userId: "ada" });
    expect(fact).toMatchObject({ id: "f1", statement: "The user is allergic to peanuts", source: { session: "threadId=c1&userId=ada", message: 1 } });

    const two = await run("c2", "What am I allergic to?");
    expect(two.answer).toBe("You are allergic to peanuts.");
    // The middleware put the fact in the system message, as a delimited memory block.
    const system = textOf(two.bodies[0]?.messages[0]?.content);
    expect(system).toContain('<memory kind="facts">');
    expect(system).toContain("The user is allergic to peanuts");
    // search_memory answered with the fact's id, date and source conversation.
    const found = textOf(two.bodies[1]?.messages.at(-1)?.content);
    expect(found).toContain(
      `[f1] The user is allergic to peanuts (about the user; since ${new Date().toISOString().slice(0, 10)}; from conversation threadId=c1&userId=ada, message 1)`,
    );

    const forget = await run("c2", "Please forget that I am allergic.");
    expect(forget.answer).toBe("Forgotten.");
    const toolResults = forget.bodies
      .at(-1)
      ?.messages.filter((message) => message.role === "tool")
      .slice(-3)
      .map((message) => textOf(message.content));
    // A schema violation and an unknown id: error results the model read, then the right id.
    expect(toolResults?.[0]).toContain('did not match expected schema\n\n✖ a fact id looks like "f3"\n  → at id');
    expect(toolResults?.[1]).toBe('Error: No fact "f99" in memory; search_memory lists the facts with their ids.');
    expect(toolResults?.[2]).toBe("Withdrew fact f1: it is no longer remembered.");

    const three = await run("c3", "Suggest a snack.");
    expect(three.answer).toBe("ok: Suggest a snack.");
    expect(JSON.stringify(three.bodies)).not.toContain("peanuts");
    // Withdrawn, kept for audit.
    expect((await readFacts(store, { userId: "ada" }))[0]).toMatchObject({ id: "f1", withdrawn: expect.any(String) });
    // The threads are memoria sessions of the user: erasure reaches them and the facts.
    await store.delete({ userId: "ada" });
    expect(await readFacts(store, { userId: "ada" })).toEqual([]);
    await store.close();
  });

  it("schedules the long-term work after the run from the thread's stored messages: facts the user stated are extracted", async () => {
    const store = createSqliteStore({ path: join(dir, "extract.db") });
    const model = new ChatOpenAI({ model: "gpt-test", apiKey: "k", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const facts = factMemory({ model, scope: ["userId"], structured: false, onError: (error) => console.error(error) });
    const agent = createAgent({ model, tools: [], middleware: [memoriaMiddleware({ store, memory: [facts], keyFields: ["userId"], saveMessages: true })] });
    const config = { configurable: { thread_id: "t1", userId: "bob" } };
    await agent.invoke({ messages: [new HumanMessage("Bob lives in Oslo")] }, config);
    await facts.idle();
    expect((await readFacts(store, { userId: "bob" })).map((fact) => fact.statement)).toEqual(["Bob lives in Oslo"]);
    expect((await store.read({ threadId: "t1", userId: "bob" })).map((message) => message.getType())).toEqual(["human", "ai"]);
    // The next run's model call gets the extracted fact.
    const from = server.requests.length;
    await agent.invoke({ messages: [new HumanMessage("Where do I live?")] }, { configurable: { thread_id: "t2", userId: "bob" } });
    expect(textOf(server.requests[from]?.messages[0]?.content)).toContain("Bob lives in Oslo");
    // Placed as a user message, the block goes before the conversation, and the system message stays as it was.
    const asUser = factMemory({ model, scope: ["userId"], structured: false, placement: "user" });
    const userPlaced = createAgent({
      model,
      tools: [],
      systemPrompt: "Be brief.",
      middleware: [memoriaMiddleware({ store, memory: asUser, keyFields: ["userId"] })],
    });
    const next = server.requests.length;
    await userPlaced.invoke({ messages: [new HumanMessage("Where is home?")] }, { configurable: { thread_id: "t3", userId: "bob" } });
    const sent = server.requests[next]?.messages ?? [];
    expect(sent.map((message) => message.role)).toEqual(["system", "user", "user"]);
    expect(textOf(sent[0]?.content)).not.toContain("<memory");
    expect(textOf(sent[1]?.content)).toMatch(/^<memory kind="facts">[\s\S]*Bob lives in Oslo/);
    expect(textOf(sent[2]?.content)).toBe("Where is home?");
    expect(() => memoriaMiddleware({ store, memory: [] })).toThrow(/memory must be a memory strategy/);
    await Promise.all([facts.idle(), asUser.idle()]);
    await store.close();
  });

  it("compacts old tool results in what the model is given, past a budget, while the thread keeps every original", async () => {
    const store = createSqliteStore({ path: join(dir, "compaction.db") });
    const model = new ChatOpenAI({ model: "gpt-test", apiKey: "k", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
    const lookup = tool(async ({ item }) => `${item}: ${"a long catalogue entry, ".repeat(60)}`, {
      name: "lookup",
      description: "Looks an item up",
      schema: z.object({ item: z.string() }),
    });
    const agent = createAgent({
      model,
      tools: [lookup],
      middleware: [memoriaMiddleware({ store, compaction: { maxTokens: 1_500, keepLast: 1 } })],
      checkpointer: new MemoriaSaver({ store }),
    });
    const config = { configurable: { thread_id: "research" } };
    for (let i = 0; i < 6; i++) await agent.invoke({ messages: [new HumanMessage(`look up item ${i}`)] }, config);
    const last = server.requests.at(-1)?.messages ?? [];
    const results = last.filter((message) => message.role === "tool").map((message) => textOf(message.content));
    expect(results).toHaveLength(6);
    expect(results[0]).toMatch(/^\[lookup result \(call l1, 1,456 characters\) left out; stored: read_conversation "threadId=research" from 2 limit 1\]$/);
    expect(results.at(-1)).toContain("look up item 5: a long catalogue entry");
    // Every call keeps its result, right after it.
    last.forEach((message, i) => {
      if (message.tool_calls?.length) expect(last[i + 1]?.role).toBe("tool");
    });
    // The thread (state and store) keeps the originals.
    const stored = await store.read({ threadId: "research" });
    expect(stored.filter((message) => message.getType() === "tool").every((message) => message.text.includes("a long catalogue entry"))).toBe(true);
    await store.close();
  });
});
