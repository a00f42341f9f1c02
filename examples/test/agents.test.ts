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
import { AgentExecutor, createToolCallingAgent, initializeAgentExecutorWithOptions } from "@langchain/classic/agents";
import { HumanMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { type HistoryStore, RunnableWithMessageHistory } from "@memoria/core";
import { BufferMemory } from "@memoria/memory/classic";
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
    if (last.role === "tool" || last.role === "function") return { content: `It is ${last.content} there.` };
    const city = /weather in (\w+)/i.exec(String(last.content))?.[1];
    if (city) return { toolCalls: [{ id: `call_${city}`, name: "get_weather", arguments: JSON.stringify({ city }) }] };
    const earlier = [...request.messages].reverse().find((m) => m.role === "tool" || m.role === "function");
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
  it.each(Object.keys(stores))(
    "keeps the turn's tool call and result (only the new messages), and the model gets them on the next turn after a restart (%s)",
    async (storeName) => {
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
    },
  );
});

describe("classic AgentExecutor with memory", () => {
  it.each(Object.keys(stores))(
    "under the wrapper, with returnIntermediateSteps: the tool call, its result and the answer are stored, and reach the next turn (%s)",
    async (storeName) => {
      const id = ++n;
      const prompt = ChatPromptTemplate.fromMessages([
        ["system", "You have a weather tool."],
        new MessagesPlaceholder("chat_history"),
        ["human", "{input}"],
        new MessagesPlaceholder("agent_scratchpad"),
      ]);
      const open = async () => {
        const agent = await createToolCallingAgent({ llm: model(), tools: [getWeather], prompt });
        const executor = new AgentExecutor({ agent, tools: [getWeather], returnIntermediateSteps: true });
        return new RunnableWithMessageHistory({
          runnable: executor,
          store: stores[storeName]!(id),
          inputMessagesKey: "input",
          historyMessagesKey: "chat_history",
          outputMessagesKey: "output",
        });
      };
      const config = { configurable: { sessionId: "executor" } };
      const first = await open();
      expect((await first.invoke({ input: "What is the weather in Oslo?" }, config)).output).toBe("It is -3°C and snowing there.");
      await first.store!.close();
      const second = await open();
      const stored = await second.store!.read({ sessionId: "executor" });
      expect(stored.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
      expect(stored[1]).toMatchObject({ tool_calls: [{ id: "call_Oslo", name: "get_weather" }] });
      expect(stored[2]).toMatchObject({ tool_call_id: "call_Oslo", content: "-3°C and snowing" });
      expect((await second.invoke({ input: "What did you find out?" }, config)).output).toBe("Earlier I looked it up: -3°C and snowing.");
      await second.store!.close();
    },
  );

  it.each(Object.keys(stores))(
    "the seed's openai-functions agent with a classic memory keeps its function call and result across a restart (%s)",
    async (storeName) => {
      const id = ++n;
      const open = async () => {
        const store = stores[storeName]!(id);
        const memory = new BufferMemory({
          chatHistory: store.history({ sessionId: "seed-004" }),
          returnMessages: true,
          memoryKey: "chat_history",
          inputKey: "input",
          outputKey: "output",
        });
        const executor = await initializeAgentExecutorWithOptions([getWeather], model(), {
          agentType: "openai-functions",
          memory,
          returnIntermediateSteps: true,
        });
        return { store, executor };
      };
      const first = await open();
      expect((await first.executor.invoke({ input: "What is the weather in Oslo?" })).output).toBe("It is -3°C and snowing there.");
      await first.store.close();
      const second = await open();
      const stored = await second.store.read({ sessionId: "seed-004" });
      expect(stored.map((m) => m.getType())).toEqual(["human", "ai", "function", "ai"]);
      expect(stored[1]!.additional_kwargs.function_call).toMatchObject({ name: "get_weather" });
      expect(stored[2]).toMatchObject({ name: "get_weather", content: "-3°C and snowing" });
      const before = server.requests.length;
      expect((await second.executor.invoke({ input: "What did you find out?" })).output).toBe("Earlier I looked it up: -3°C and snowing.");
      expect(server.requests[before]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "function", "assistant", "user"]);
      await second.store.close();
    },
  );
});
