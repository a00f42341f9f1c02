/**
 * Agents that return the whole thread ({ messages }) under memoria's wrapper: LangChain
 * v1's createAgent and LangGraph's prebuilt ReAct agent, with the real ChatOpenAI
 * against a local server that speaks the chat-completions protocol and scripts a
 * tool call, then an answer. Only each turn's new messages are stored, tool calls and
 * results included, and they reach the model on the next turn, after a restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { type HistoryStore, RunnableWithMessageHistory } from "@memoria/core";
import { createRedisStore } from "@memoria/redis";
import { createSqliteStore } from "@memoria/sql";
import { type OpenAICompatibleServer, type RunningRedis, startOpenAICompatibleServer, startRedis } from "@memoria/testkit/servers";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

let server: OpenAICompatibleServer;
let redis: RunningRedis;
const dir = mkdtempSync(join(tmpdir(), "memoria-agents-"));

beforeAll(async () => {
  redis = await startRedis();
  server = await startOpenAICompatibleServer((request) => {
    const last = request.messages[request.messages.length - 1]!;
    if (last.role === "tool") return { content: `It is ${last.content} there.` };
    const city = /weather in (\w+)/i.exec(String(last.content))?.[1];
    if (city) return { toolCalls: [{ id: `call_${city}`, name: "get_weather", arguments: JSON.stringify({ city }) }] };
    const earlier = [...request.messages].reverse().find((m) => m.role === "tool");
    return { content: `Earlier I looked it up: ${earlier ? earlier.content : "nothing"}.` };
  });
});
afterAll(async () => {
  await server.stop();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

const getWeather = tool(async ({ city }: { city: string }) => ({ Oslo: "-3°C and snowing", Lisbon: "18°C and sunny" })[city] ?? "unknown", {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

function model() {
  return new ChatOpenAI({ model: "gpt-test", apiKey: "test-key", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
}

const agents = {
  "LangChain v1 createAgent": () => createAgent({ model: model(), tools: [getWeather] }),
  "LangGraph createReactAgent": () => createReactAgent({ llm: model(), tools: [getWeather] }),
};
const stores: Record<string, (n: number) => HistoryStore> = {
  sqlite: (n) => createSqliteStore({ path: join(dir, `agents-${n}.db`) }),
  redis: (n) => createRedisStore({ url: redis.url, keyPrefix: `agents-${n}:` }),
};

let n = 0;
describe.each(Object.entries(agents))("%s with memory", (_, makeAgent) => {
  it.each(Object.keys(stores))("keeps the turn's tool call and result (only the new messages), and the model gets them on the next turn after a restart (%s)", async (storeName) => {
    const id = ++n;
    const open = () =>
      new RunnableWithMessageHistory({ runnable: makeAgent(), store: stores[storeName]!(id), inputMessagesKey: "messages", outputMessagesKey: "messages" });
    const config = { configurable: { sessionId: "agent" } };
    const first = open();
    await first.invoke({ messages: [new HumanMessage("What is the weather in Oslo?")] }, config);
    await first.store!.close();

    // A new process: a new store and agent over the same data.
    const second = open();
    const stored = await second.store!.read({ sessionId: "agent" });
    expect(stored.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
    expect(stored[1]).toMatchObject({ tool_calls: [{ id: "call_Oslo", name: "get_weather", args: { city: "Oslo" } }] });
    expect(stored[2]).toMatchObject({ tool_call_id: "call_Oslo", content: "-3°C and snowing" });
    expect(stored[3]!.content).toBe("It is -3°C and snowing there.");

    const before = server.requests.length;
    const answer = await second.invoke({ messages: [new HumanMessage("What did you find out?")] }, config);
    expect(answer.messages.at(-1).content).toBe("Earlier I looked it up: -3°C and snowing.");
    // The model's request held the whole earlier turn, every tool call followed by its result.
    const sent = server.requests[before]!.messages.map((m) => m.role);
    expect(sent.slice(-5)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect((await second.store!.read({ sessionId: "agent" })).map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
    await second.store!.close();
  });
});
