import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HistoryStore, MemoriaError, promptRecords } from "@memoria/core";
import { createRedisStore } from "@memoria/redis";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { type OpenAICompatibleServer, startRedis } from "@memoria/testkit/servers";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadChat } from "../src/index.js";
import { Chat, type ChatApp, LONG_STORY, STORY, reload, startChatApp, startModel } from "./chat-app.js";

let model: OpenAICompatibleServer;
const dir = mkdtempSync(join(tmpdir(), "memoria-ai-sdk-app-"));
beforeAll(async () => {
  model = await startModel();
});
afterAll(async () => {
  await model.stop();
  rmSync(dir, { recursive: true, force: true });
});

const openers: [string, () => HistoryStore][] = [
  ["SQLite", () => createSqliteStore({ path: join(dir, `${randomUUID()}.db`) })],
  ["PostgreSQL", () => createPostgresStore({ connectionString: inject("databaseUrl"), tablePrefix: `ai${randomUUID().slice(0, 8)}_`, maxConnections: 2 })],
  ["Redis", () => createRedisStore({ url: inject("redisUrl"), keyPrefix: `ai${randomUUID().slice(0, 8)}:` })],
];

const textOf = (message: UIMessage | undefined) => (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(openers)("a useChat app on %s", (_name, open) => {
  let store: HistoryStore;
  let app: ChatApp;
  const chatId = `chat-${randomUUID()}`;
  const key = { userId: "u1", sessionId: chatId };
  let chat: Chat;
  beforeAll(async () => {
    store = open();
    app = await startChatApp(store, model.baseURL, { onDisconnect: "stop" });
    chat = new Chat(app.url, chatId);
  });
  afterAll(async () => {
    await app.stop();
    await store.delete({ sessionId: chatId });
    await store.close();
  });

  it("saves two turns, one with a tool call, and a reload gives back exactly what the client shows", async () => {
    await chat.sendMessage({ text: "hello there" });
    await chat.sendMessage({ text: "what is the weather?" });
    await app.saved(2);
    expect(chat.status).toBe("ready");
    expect(textOf(chat.messages[1])).toBe("You said: hello there");
    expect(textOf(chat.messages[3])).toBe("It is 18 degrees in Paris.");
    expect(chat.messages[3]?.parts.some((part) => part.type === "tool-weather" && part.state === "output-available")).toBe(true);
    expect(await reload(app.url, chatId)).toEqual(chat.messages);
    // Stored as LangChain stores a turn: the tool call, its result, the answer.
    expect((await store.read(key)).map((message) => message.getType())).toEqual(["human", "ai", "human", "ai", "tool", "ai"]);
    // The request body is DefaultChatTransport's: the chat id, the whole list, the trigger.
    expect(app.bodies[1]).toMatchObject({ id: chatId, trigger: "submit-message" });
  });

  it("saves a stopped answer as far as it went, marked partial", async () => {
    const sending = chat.sendMessage({ text: "tell me a long story" });
    await until(() => textOf(chat.lastMessage).startsWith("Once upon"), "the story to start");
    await chat.stop();
    await sending;
    await app.saved(3);
    const shown = chat.lastMessage as UIMessage;
    const stored = await loadChat(store, key);
    const last = stored.messages.at(-1) as UIMessage;
    expect(last.id).toBe(shown.id);
    expect(textOf(last)).toMatch(/^Once upon/);
    expect(LONG_STORY.startsWith(textOf(last)) && textOf(last).length < LONG_STORY.length).toBe(true);
    expect(stored.partial).toEqual([shown.id]);
    // The rest is what the user saw; the stopped answer holds what was shown, and may hold
    // the chunks the server made before it heard of the stop (it is marked partial).
    const reloaded = await reload(app.url, chatId);
    expect(reloaded.slice(0, -1)).toEqual(chat.messages.slice(0, -1));
    expect(textOf(reloaded.at(-1)).startsWith(textOf(shown))).toBe(true);
  });

  it("stores the user's message once when the same request is sent again, the newer answer replacing the older", async () => {
    await chat.sendMessage({ text: "one more thing" });
    await app.saved(4);
    const body = app.bodies[3];
    const again = await fetch(`${app.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await again.text();
    await app.saved(5);
    const stored = (await loadChat(store, key)).messages;
    expect(stored.filter((message) => message.role === "user" && textOf(message) === "one more thing")).toHaveLength(1);
    expect(stored.at(-2)?.role).toBe("user");
    expect(stored.at(-1)?.id).not.toBe(chat.lastMessage?.id);
  });

  it("regenerating replaces the last answer, and a reload shows what the client shows", async () => {
    chat.messages = await reload(app.url, chatId);
    const replaced = chat.lastMessage?.id;
    await chat.regenerate();
    await app.saved(6);
    expect(chat.lastMessage?.id).not.toBe(replaced);
    const stored = await reload(app.url, chatId);
    expect(stored).toEqual(chat.messages);
    expect(stored.some((message) => message.id === replaced)).toBe(false);
  });

  it("editing an earlier message leaves the store holding what the user sees, and a reload shows it", async () => {
    chat.messages = await reload(app.url, chatId);
    const edited = chat.messages[2] as UIMessage; // "what is the weather?"
    const before = chat.messages.length;
    await chat.sendMessage({ text: "hello again", messageId: edited.id });
    await app.saved(7);
    expect(app.bodies[6]).toMatchObject({ trigger: "submit-message", messageId: edited.id });
    expect(chat.messages).toHaveLength(4);
    expect(textOf(chat.messages[2])).toBe("hello again");
    expect(textOf(chat.messages[3])).toBe("You said: hello again");
    expect(before).toBeGreaterThan(4);
    expect(await reload(app.url, chatId)).toEqual(chat.messages);
    // Then a plain send adds to what the user saw, and removes nothing.
    await chat.sendMessage({ text: "thanks" });
    await app.saved(8);
    expect(await reload(app.url, chatId)).toEqual(chat.messages);
    expect(chat.messages).toHaveLength(6);
  });
});

describe("memoriaMemory({ recordPrompts: true })", () => {
  it("keeps what each model call of a turn was given, the chat's stored messages by position, as the model received them", async () => {
    const store = createSqliteStore({ path: join(dir, `${randomUUID()}.db`) });
    const app = await startChatApp(store, model.baseURL, { onDisconnect: "stop", recordPrompts: true });
    const chat = new Chat(app.url, "recorded");
    const key = { userId: "u1", sessionId: "recorded" };
    try {
      const from = model.requests.length;
      await chat.sendMessage({ text: "hello there" });
      await chat.sendMessage({ text: "what is the weather?" });
      await app.saved(2);
      const records = await promptRecords(store, key);
      expect(records.map((record) => record.turn)).toEqual([0, 2]);
      // The tool step is the second call of the second turn: given the turn's tool call and result, by position.
      expect(records[1]?.calls.map((call) => call.parts)).toEqual([[{ stored: [0, 3] }], [{ stored: [0, 5] }]]);
      expect(records[1]?.calls[0]?.model).toBe("local-model");
      // Read back, a record is the messages the model server received.
      const stored = await store.read(key);
      const resolved = (records[1]?.calls[1]?.parts ?? []).flatMap((part) =>
        "stored" in part ? stored.slice(...part.stored).map((m) => m.getType()) : [part.type],
      );
      const roles = model.requests
        .slice(from)
        .at(-1)
        ?.messages.map((message) => message.role);
      expect(resolved).toEqual(roles?.map((role) => ({ user: "human", assistant: "ai" })[role as string] ?? role));
      // Regenerating the answer replaces the turn's record: one call, the new run's.
      await chat.regenerate();
      await app.saved(3);
      const again = await promptRecords(store, key);
      expect(again.map((record) => record.turn)).toEqual([0, 2]);
      expect(again[1]?.run).not.toBe(records[1]?.run);
    } finally {
      await app.stop();
      await store.close();
    }
  });
});

describe("a client that goes away", () => {
  it("does not lose the answer: generation runs to the end and the whole answer is saved", async () => {
    const store = createSqliteStore({ path: join(dir, "disconnect.db") });
    const app = await startChatApp(store, model.baseURL, { onDisconnect: "finish" });
    try {
      const chatId = "leaving";
      const message: UIMessage = { id: "u-story", role: "user", parts: [{ type: "text", text: "tell me a story" }] };
      const leave = new AbortController();
      const response = await fetch(`${app.url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: chatId, messages: [message], trigger: "submit-message" }),
        signal: leave.signal,
      });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read(); // the first chunk, then the tab closes
      leave.abort();
      await app.saved(1);
      const stored = await loadChat(store, { userId: "u1", sessionId: chatId });
      expect(textOf(stored.messages[1])).toBe(STORY);
      expect(stored.partial).toEqual([]);
    } finally {
      await app.stop();
      await store.close();
    }
  });
});

describe("a store that dies mid-chat", () => {
  it("hands the failed save over as a typed error, never crashing the app, which serves on after a restart", async () => {
    const redis = await startRedis();
    const store = createRedisStore({ url: redis.url, keyPrefix: "faults:" });
    const failures: unknown[] = [];
    const app = await startChatApp(store, model.baseURL, { onDisconnect: "stop", saver: { onSaveError: (error) => void failures.push(error) } });
    try {
      const chat = new Chat(app.url, "fragile");
      await chat.sendMessage({ text: "hello" });
      await app.saved(1);
      await redis.kill();
      await chat.sendMessage({ text: "are you there?" });
      await app.saved(2);
      expect(failures).toHaveLength(1);
      expect(MemoriaError.isInstance(failures[0]) && failures[0].code).toMatch(/^(STORE_UNAVAILABLE|SAVE_FAILED|LOCK_TIMEOUT)$/);
      await redis.restart();
      const again = new Chat(app.url, "fragile", await reload(app.url, "fragile"));
      await again.sendMessage({ text: "back again" });
      await app.saved(3);
      const stored = (await loadChat(store, { userId: "u1", sessionId: "fragile" })).messages.map((message) => textOf(message));
      expect(stored).toEqual(["hello", "You said: hello", "back again", "You said: back again"]);
    } finally {
      await app.stop();
      await store.close();
      await redis.stop();
    }
  });
});
