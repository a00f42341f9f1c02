import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { ChatOpenAI } from "@langchain/openai";
import { RunnableWithMessageHistory } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import type { OpenAICompatibleServer } from "@memoria/testkit/servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadChat } from "../src/index.js";
import { Chat, type ChatApp, reload, startChatApp, startModel } from "./chat-app.js";

// One history, two worlds: an AI SDK chat is the session RunnableWithMessageHistory
// continues and `memoria show` prints, and what LangChain adds loads back into the chat.

const dir = mkdtempSync(join(tmpdir(), "memoria-ai-sdk-worlds-"));
const path = join(dir, "chat.db");
const cli = join(import.meta.dirname, "../../cli/dist/bin.js");
let model: OpenAICompatibleServer;
let app: ChatApp;
const store = createSqliteStore({ path });
beforeAll(async () => {
  model = await startModel();
  app = await startChatApp(store, model.baseURL, { onDisconnect: "stop" });
});
afterAll(async () => {
  await app.stop();
  await model.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an AI SDK chat and LangChain on one session", () => {
  it("is continued by RunnableWithMessageHistory, printed by memoria show, and loads back with LangChain's turn in it", async () => {
    const chat = new Chat(app.url, "shared");
    await chat.sendMessage({ text: "what is the weather?" });
    await app.saved(1);

    const prompt = ChatPromptTemplate.fromMessages([["system", "You are brief."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
    const llm = new ChatOpenAI({ model: "local-model", apiKey: "test", configuration: { baseURL: model.baseURL }, maxRetries: 0 });
    const withHistory = new RunnableWithMessageHistory({
      runnable: prompt.pipe(llm),
      store,
      sessionFields: ["userId", "sessionId"],
      inputMessagesKey: "input",
      historyMessagesKey: "history",
    });
    const reply = await withHistory.invoke({ input: "thanks!" }, { configurable: { userId: "u1", sessionId: "shared" } });
    expect(reply.text).toBe("You said: thanks!");
    // The model got the chat as LangChain sends a conversation: the call, its result, the answer; nothing of the UI bookkeeping.
    const sent = model.requests.at(-1)?.messages ?? [];
    expect(sent.map((message) => message.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(sent[2]?.tool_calls).toMatchObject([{ type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }]);
    expect(sent[4]?.content).toBe("It is 18 degrees in Paris.");
    expect(JSON.stringify(sent)).not.toContain("ui_message");

    const { stdout } = await promisify(execFile)(process.execPath, [cli, "show", "sessionId=shared", "userId=u1", "--store", `sqlite:${path}`]);
    for (const line of ["what is the weather?", "It is 18 degrees in Paris.", "thanks!", "You said: thanks!"]) expect(stdout).toContain(line);

    const loaded = (await loadChat(store, { userId: "u1", sessionId: "shared" })).messages;
    expect(loaded.slice(-2).map((message) => [message.role, message.parts.flatMap((part) => (part.type === "text" ? [part.text] : []))])).toEqual([
      ["user", ["thanks!"]],
      ["assistant", ["You said: thanks!"]],
    ]);

    // The client takes the chat up again with LangChain's turn in it; LangChain's messages are kept as they were written.
    const written = (await store.read({ userId: "u1", sessionId: "shared" })).slice(-2);
    chat.messages = await reload(app.url, "shared");
    await chat.sendMessage({ text: "bye" });
    await app.saved(2);
    expect(await reload(app.url, "shared")).toEqual(chat.messages);
    const kept = (await store.read({ userId: "u1", sessionId: "shared" })).slice(4, 6);
    expect(kept.map((message) => message.toDict())).toEqual(written.map((message) => message.toDict()));
  }, 120_000); // it starts a `memoria show` process, which loads the CLI and its stores
});
