/**
 * The real @langchain/openai client, driven against a local server that speaks
 * the chat-completions protocol, with memoria's wrapper and the SQLite store.
 */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { ChatOpenAI } from "@langchain/openai";
import { RunnableWithMessageHistory } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@memoria/testkit/servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: OpenAICompatibleServer;
beforeAll(async () => {
  server = await startOpenAICompatibleServer((request) => {
    const last = request.messages[request.messages.length - 1]!;
    if (last.content === "please fail") throw new Error("model overloaded");
    if (request.tools?.length && last.role === "user") {
      return { toolCalls: [{ id: "call_42", name: "get_weather", arguments: JSON.stringify({ city: "Oslo" }) }] };
    }
    return {
      content: `reply #${request.messages.length} to: ${typeof last.content === "string" ? last.content : JSON.stringify(last.content)}`,
      usage: { prompt_tokens: 11, completion_tokens: 7 },
    };
  });
});
afterAll(() => server.stop());

function model() {
  return new ChatOpenAI({ model: "gpt-test", apiKey: "test-key", configuration: { baseURL: server.baseURL }, maxRetries: 0 });
}

function chain(store = createSqliteStore({ path: ":memory:" })) {
  const prompt = ChatPromptTemplate.fromMessages([["system", "Be brief."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  return {
    store,
    chat: new RunnableWithMessageHistory({ runnable: prompt.pipe(model()), store, inputMessagesKey: "input", historyMessagesKey: "history" }),
  };
}

describe("ChatOpenAI through memoria", () => {
  it("sends the history in the request body, in order", async () => {
    const { chat, store } = chain();
    const config = { configurable: { sessionId: "order" } };
    await chat.invoke({ input: "first" }, config);
    await chat.invoke({ input: "second" }, config);
    const body = server.requests[server.requests.length - 1]!;
    expect(body.model).toBe("gpt-test");
    expect(body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "first" },
      { role: "assistant", content: "reply #2 to: first" },
      { role: "user", content: "second" },
    ]);
    await store.close();
  });

  it("saves a streamed answer as one message with its usage metadata", async () => {
    const { chat, store } = chain();
    const config = { configurable: { sessionId: "stream" } };
    const pieces: string[] = [];
    for await (const chunk of await chat.stream({ input: "tell me a long thing" }, config)) pieces.push(String(chunk.content));
    expect(pieces.filter(Boolean).length).toBeGreaterThan(3);
    expect(server.requests[server.requests.length - 1]!.stream).toBe(true);
    const stored = await store.read(config.configurable);
    expect(stored).toHaveLength(2);
    expect(stored[1]).toBeInstanceOf(AIMessage);
    expect(stored[1]!.content).toBe("reply #2 to: tell me a long thing");
    expect((stored[1] as AIMessage).usage_metadata).toMatchObject({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
    await store.close();
  });

  it("keeps tool calls through the round trip into the next request", async () => {
    const store = createSqliteStore({ path: ":memory:" });
    const tools = [
      {
        type: "function" as const,
        function: { name: "get_weather", description: "Weather for a city", parameters: { type: "object", properties: { city: { type: "string" } } } },
      },
    ];
    const chat = new RunnableWithMessageHistory({ runnable: model().bindTools(tools), store });
    const config = { configurable: { sessionId: "tools" } };
    for await (const _ of await chat.stream("weather in Oslo?", config)) void _;
    const [, call] = await store.read(config.configurable);
    expect((call as AIMessage).tool_calls).toEqual([{ id: "call_42", name: "get_weather", args: { city: "Oslo" }, type: "tool_call" }]);
    // The tool result comes back as the next turn's input, as an agent loop does.
    await chat.invoke([new ToolMessage({ content: "-3C and snowing", tool_call_id: "call_42" })], config);
    const body = server.requests[server.requests.length - 1]!;
    expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(body.messages[1]!.tool_calls).toEqual([{ id: "call_42", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
    expect(body.messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_42", content: "-3C and snowing" });
    await store.close();
  });

  it("rejects the call, storing nothing, when the server answers 500", async () => {
    const store = createSqliteStore({ path: ":memory:" });
    const chat = new RunnableWithMessageHistory({ runnable: model(), store });
    await expect(chat.invoke("please fail", { configurable: { sessionId: "x" } })).rejects.toThrow(/500|model overloaded/);
    expect(await store.count({ sessionId: "x" })).toBe(0);
    await store.close();
  });
});

describe("pnpm demo with OPENAI_BASE_URL", () => {
  it("talks to any OpenAI-compatible server through ChatOpenAI, with the history in the request", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { runDemo } = await import("../src/demo/chat.js");
    const dir = mkdtempSync(join(tmpdir(), "memoria-demo-openai-"));
    const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: "local-llama" };
    try {
      let out = "";
      const io = {
        write: (text: string) => {
          out += text;
        },
        env,
        cwd: dir,
      };
      await runDemo(["--session", "o", "--message", "My name is Ada"], io);
      await runDemo(["--session", "o", "--message", "What is my name?"], io);
      expect(out).toContain("reply #2 to: My name is Ada");
      const body = server.requests[server.requests.length - 1]!;
      expect(body.model).toBe("local-llama");
      expect(body.stream).toBe(true);
      expect(body.messages.map((m) => m.content)).toEqual([
        "You are memoria's demo assistant.",
        "My name is Ada",
        "reply #2 to: My name is Ada",
        "What is my name?",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
