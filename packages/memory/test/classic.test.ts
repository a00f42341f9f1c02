import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, HumanMessagePromptTemplate, MessagesPlaceholder, PromptTemplate } from "@langchain/core/prompts";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { LLMChain } from "@langchain/classic/chains";
import { ConversationChain } from "@langchain/classic/chains";
import { createInMemoryStore } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import { transcript } from "@memoria/testkit";
import { describe, expect, it, vi } from "vitest";
import {
  BufferMemory,
  BufferWindowMemory,
  CombinedMemory,
  ConversationSummaryBufferMemory,
  ConversationSummaryMemory,
  ConversationTokenBufferMemory,
  ReadOnlySharedMemory,
} from "../src/classic.js";
import { ScriptedLLM, recordingSummarizer } from "./helpers.js";

/** Records every prompt (LLM text or chat messages) a chain sends. */
class PromptRecorder extends BaseCallbackHandler {
  name = "prompt-recorder";
  texts: string[] = [];
  chats: BaseMessage[][] = [];
  override handleLLMStart(_llm: unknown, prompts: string[]) {
    this.texts.push(...prompts);
  }
  override handleChatModelStart(_llm: unknown, messages: BaseMessage[][]) {
    this.chats.push(...messages);
  }
}

const SEED_TEMPLATE = `You are a chatbot having a conversation with a human.

{chat_history}
Human: {human_input}
Chatbot:`;

describe("seed 000/001: LLMChain with BufferMemory", () => {
  it("sends exactly the seed's prompts, the history rendered as Human: / AI: lines", async () => {
    const recorder = new PromptRecorder();
    const llm = new ScriptedLLM([" Hi there! How can I help you today?", " I'm doing great, thanks for asking! How are you doing?"]);
    const chain = new LLMChain({
      llm,
      prompt: new PromptTemplate({ inputVariables: ["chat_history", "human_input"], template: SEED_TEMPLATE }),
      memory: new BufferMemory({ memoryKey: "chat_history" }),
    });
    const config = { callbacks: [recorder] };
    expect((await chain.invoke({ human_input: "Hi there my friend" }, config)).text).toBe(" Hi there! How can I help you today?");
    await chain.invoke({ human_input: "Not too bad - how are you?" }, config);
    expect(recorder.texts).toEqual([
      "You are a chatbot having a conversation with a human.\n\n\nHuman: Hi there my friend\nChatbot:",
      "You are a chatbot having a conversation with a human.\n\nHuman: Hi there my friend\nAI:  Hi there! How can I help you today?\nHuman: Not too bad - how are you?\nChatbot:",
    ]);
  });

  it("prints the formatted prompt with verbose: true", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const chain = new LLMChain({
        llm: new ScriptedLLM(["ok"]),
        prompt: PromptTemplate.fromTemplate(SEED_TEMPLATE),
        memory: new BufferMemory({ memoryKey: "chat_history" }),
        verbose: true,
      });
      await chain.predict({ human_input: "Hi there my friend" });
      const printed = log.mock.calls.map((args) => args.join(" ")).join("\n");
      expect(printed).toContain(JSON.stringify("You are a chatbot having a conversation with a human.\n\n\nHuman: Hi there my friend\nChatbot:"));
    } finally {
      log.mockRestore();
    }
  });

  it("the chat variant sends system, human, AI, human (returnMessages: true)", async () => {
    const recorder = new PromptRecorder();
    const prompt = ChatPromptTemplate.fromMessages([
      new SystemMessage("You are a chatbot having a conversation with a human."),
      new MessagesPlaceholder("chat_history"),
      HumanMessagePromptTemplate.fromTemplate("{human_input}"),
    ]);
    const chain = new LLMChain({
      llm: new FakeListChatModel({ responses: ["Hello! How can I assist you today, my friend?", "I'm an AI chatbot."] }),
      prompt,
      memory: new BufferMemory({ memoryKey: "chat_history", returnMessages: true }),
    });
    await chain.invoke({ human_input: "Hi there my friend" }, { callbacks: [recorder] });
    await chain.invoke({ human_input: "Not too bad - how are you?" }, { callbacks: [recorder] });
    expect(recorder.chats.length, JSON.stringify(recorder.chats)).toBe(2);
    expect(transcript(recorder.chats[1]!)).toEqual([
      "system: You are a chatbot having a conversation with a human.",
      "human: Hi there my friend",
      "ai: Hello! How can I assist you today, my friend?",
      "human: Not too bad - how are you?",
    ]);
  });
});

describe("classic memory classes", () => {
  it("ConversationChain with BufferMemory on a memoria store: the conversation persists in the store", async () => {
    const store = createSqliteStore({ path: ":memory:" });
    const key = { sessionId: "conversation" };
    const chain = new ConversationChain({
      llm: new ScriptedLLM(["Nice to meet you, Ada.", "You are Ada."]),
      memory: new BufferMemory({ chatHistory: store.history(key) }),
    });
    await chain.invoke({ input: "I am Ada" });
    await chain.invoke({ input: "Who am I?" });
    expect(transcript(await store.read(key))).toEqual(["human: I am Ada", "ai: Nice to meet you, Ada.", "human: Who am I?", "ai: You are Ada."]);
    await store.close();
  });

  it("BufferWindowMemory keeps the last k turns", async () => {
    const memory = new BufferWindowMemory({ k: 1, returnMessages: true });
    await memory.saveContext({ input: "one" }, { output: "1" });
    await memory.saveContext({ input: "two" }, { output: "2" });
    expect(transcript((await memory.loadMemoryVariables({})).history)).toEqual(["human: two", "ai: 2"]);
  });

  it("ConversationTokenBufferMemory keeps what fits in maxTokenLimit", async () => {
    const memory = new ConversationTokenBufferMemory({ maxTokenLimit: 30 });
    for (let i = 0; i < 5; i++) await memory.saveContext({ input: `question ${i} is here` }, { output: `answer ${i} is there` });
    const history = (await memory.loadMemoryVariables({})).history as string;
    expect(history.startsWith("Human: question")).toBe(true);
    expect(history).toContain("answer 4 is there");
    expect(history).not.toContain("question 0");
  });

  it("ConversationSummaryMemory gives the summary text, folding each turn once", async () => {
    const { model, calls } = recordingSummarizer();
    const memory = new ConversationSummaryMemory({ llm: model, memoryKey: "summary" });
    await memory.saveContext({ input: "Alpha says hi" }, { output: "Bravo answers" });
    await memory.saveContext({ input: "Charlie asks" }, { output: "Delta replies" });
    expect(await memory.loadMemoryVariables({})).toEqual({ summary: "Alpha Bravo Charlie Delta" });
    expect(calls).toEqual([
      ["Human: Alpha says hi", "AI: Bravo answers"],
      ["Human: Charlie asks", "AI: Delta replies"],
    ]);
    const asMessages = new ConversationSummaryMemory({ llm: model, returnMessages: true });
    await asMessages.saveContext({ input: "Echo" }, { output: "Foxtrot" });
    const [message] = (await asMessages.loadMemoryVariables({})).history as BaseMessage[];
    expect(message).toBeInstanceOf(SystemMessage);
  });

  it("ConversationSummaryBufferMemory keeps its summary in the store across instances", async () => {
    const store = createInMemoryStore();
    const key = { sessionId: "sb" };
    const { model } = recordingSummarizer();
    const first = new ConversationSummaryBufferMemory({ llm: model, maxTokenLimit: 40, chatHistory: store.history(key), returnMessages: true });
    for (let i = 0; i < 6; i++) await first.saveContext({ input: `Word${i} and more words here` }, { output: `Reply${i} with words too` });
    const again = new ConversationSummaryBufferMemory({ llm: model, maxTokenLimit: 40, chatHistory: store.history(key), returnMessages: true });
    const loaded = (await again.loadMemoryVariables({})).history as BaseMessage[];
    expect(loaded[0]).toBeInstanceOf(SystemMessage);
    expect(String(loaded[0]!.content)).toContain("Word0 Reply0");
    expect(loaded[loaded.length - 1]!.content).toBe("Reply5 with words too");
    expect(await store.getState(key, "summary-buffer")).toMatchObject({ summary: expect.stringContaining("Word0") });
  });

  it("ReadOnlySharedMemory reads another memory and never writes it; CombinedMemory merges", async () => {
    const shared = new BufferMemory({ memoryKey: "chat" });
    await shared.saveContext({ input: "hello" }, { output: "hi" });
    const readOnly = new ReadOnlySharedMemory({ memory: shared });
    await readOnly.saveContext({ input: "ignored" }, { output: "ignored" });
    expect(await readOnly.loadMemoryVariables({})).toEqual({ chat: "Human: hello\nAI: hi" });
    const window = new BufferWindowMemory({ k: 1, memoryKey: "recent" });
    const combined = new CombinedMemory({ memories: [new BufferMemory({ memoryKey: "all", inputKey: "input" }), window] });
    await combined.saveContext({ input: "q" }, { output: "a" });
    expect(combined.memoryKeys).toEqual(["all", "recent"]);
    expect(await combined.loadMemoryVariables({})).toEqual({ all: "Human: q\nAI: a", recent: "Human: q\nAI: a" });
    expect(() => new CombinedMemory({ memories: [new BufferMemory(), new BufferMemory()] })).toThrow(/history/);
  });
});
