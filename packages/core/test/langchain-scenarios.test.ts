/**
 * LangChain's own scenarios for its RunnableWithMessageHistory, run against ours:
 * changing the import is all a user should have to do.
 */
import { AIMessage, type AIMessageChunk, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { StringOutputParser } from "@langchain/core/output_parsers";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda } from "@langchain/core/runnables";
import { FakeChatModel, FakeListChatModel } from "@langchain/core/utils/testing";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { describe, expect, it } from "vitest";
import { RunnableWithMessageHistory, createInMemoryStore } from "../src/index.js";
import { transcript } from "./helpers.js";

function historyFactory() {
  const histories = new Map<string, InMemoryChatMessageHistory>();
  const getMessageHistory = (sessionId: string) => {
    if (!histories.has(sessionId)) histories.set(sessionId, new InMemoryChatMessageHistory());
    return histories.get(sessionId)!;
  };
  return { histories, getMessageHistory };
}

const config = { configurable: { sessionId: "1" } };

describe("LangChain's scenarios", () => {
  it("wraps a lambda over a message list (getMessageHistory)", async () => {
    const runnable = RunnableLambda.from((messages: BaseMessage[]) => `you said: ${messages.map((m) => m.content).join(", ")}`);
    const { histories, getMessageHistory } = historyFactory();
    const withHistory = new RunnableWithMessageHistory({ runnable, getMessageHistory });
    expect(await withHistory.invoke([new HumanMessage("hello")], config)).toBe("you said: hello");
    expect(await withHistory.invoke([new HumanMessage("good bye")], config)).toBe("you said: hello, you said: hello, good bye");
    expect(transcript(await histories.get("1")!.getMessages())).toEqual([
      "human: hello",
      "ai: you said: hello",
      "human: good bye",
      "ai: you said: hello, you said: hello, good bye",
    ]);
  });

  it("wraps a chat model: invoke, then stream", async () => {
    const store = createInMemoryStore();
    const model = new FakeListChatModel({ responses: ["Hello there!", "Hi again."] });
    const withHistory = new RunnableWithMessageHistory({ runnable: model, store });
    const first = await withHistory.invoke("hi", config);
    expect(first.content).toBe("Hello there!");
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await withHistory.stream("and again", config)) chunks.push(chunk as AIMessageChunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.content).join("")).toBe("Hi again.");
    expect(transcript(await store.read(config.configurable))).toEqual(["human: hi", "ai: Hello there!", "human: and again", "ai: Hi again."]);
  });

  it("runs a messages-in, messages-out chain with a placeholder", async () => {
    const store = createInMemoryStore();
    const prompt = ChatPromptTemplate.fromMessages([
      ["system", "You are helpful."],
      ["placeholder", "{messages}"],
    ]);
    const chain = prompt.pipe(new FakeChatModel({}));
    const withHistory = new RunnableWithMessageHistory({ runnable: chain, store, inputMessagesKey: "messages" });
    await withHistory.invoke({ messages: [new HumanMessage("one")] }, config);
    const second = await withHistory.invoke({ messages: [new HumanMessage("two")] }, config);
    // The echo model repeats the whole prompt: system, then every earlier turn.
    expect(second.content).toBe(["You are helpful.", "one", "You are helpful.\none", "two"].join("\n"));
    expect(await store.count(config.configurable)).toBe(4);
  });

  it("runs a prompt + model sequence with inputMessagesKey and historyMessagesKey", async () => {
    const store = createInMemoryStore();
    const prompt = ChatPromptTemplate.fromMessages([
      ["system", "You're an assistant who's good at {ability}"],
      new MessagesPlaceholder("history"),
      ["human", "{question}"],
    ]);
    const withHistory = new RunnableWithMessageHistory({
      runnable: prompt.pipe(new FakeChatModel({})),
      store,
      inputMessagesKey: "question",
      historyMessagesKey: "history",
    });
    await withHistory.invoke({ ability: "math", question: "What does cosine mean?" }, config);
    const second = await withHistory.invoke({ ability: "math", question: "What's its inverse?" }, config);
    expect(String(second.content).split("\n")).toEqual([
      "You're an assistant who's good at math",
      "What does cosine mean?",
      "You're an assistant who's good at math",
      "What does cosine mean?",
      "What's its inverse?",
    ]);
    expect(transcript(await store.read(config.configurable))).toEqual([
      "human: What does cosine mean?",
      `ai: You're an assistant who's good at math\nWhat does cosine mean?`,
      "human: What's its inverse?",
      `ai: ${second.content}`,
    ]);
  });

  it("streams through .pipe(new StringOutputParser())", async () => {
    const store = createInMemoryStore();
    const prompt = ChatPromptTemplate.fromMessages([new MessagesPlaceholder("history"), ["human", "{question}"]]);
    const model = new FakeListChatModel({ responses: ["streamed answer"] });
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      store,
      inputMessagesKey: "question",
      historyMessagesKey: "history",
    }).pipe(new StringOutputParser());
    const pieces: string[] = [];
    for await (const piece of await chain.stream({ question: "go" }, config)) pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("streamed answer");
    const stored = await store.read(config.configurable);
    expect(transcript(stored)).toEqual(["human: go", "ai: streamed answer"]);
    expect(stored[1]).toBeInstanceOf(AIMessage);
  });
});
