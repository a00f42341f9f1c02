// The testkit's door isolation suite through the AI SDK door: useChat chats saved
// and loaded by chat id (saveChat, loadChat), keyed per user as the docs' route
// keys them, over the stores this package tests.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { createRedisStore } from "@memoria/redis";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { type DoorSetup, doorIsolationSuite } from "@memoria/testkit";
import type { UIMessage } from "ai";
import { afterAll, inject } from "vitest";
import { loadChat, saveChat } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-ai-sdk-door-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = (id: string, role: UIMessage["role"], said: string): UIMessage => ({ id, role, parts: [{ type: "text", text: said }] });

const chatDoor: DoorSetup = {
  name: "saveChat / loadChat (a chat per user and chat id)",
  open(store, userId) {
    const key = (chatId: string) => ({ userId, conversationId: chatId });
    let said = "";
    return {
      async write(secret) {
        said = secret;
        await saveChat(store, key("chat-1"), [text("u1", "user", `chat-1 says ${secret}`), text("a1", "assistant", "noted")]);
        await saveChat(store, key("chat-2"), [text("u1", "user", `chat-2 says ${secret}`), text("a1", "assistant", "noted")]);
      },
      async read() {
        const seen = [];
        for (const chatId of ["chat-1", "chat-2"]) seen.push(await loadChat(store, key(chatId)), await loadChat(store, key(chatId), { last: 1 }));
        return JSON.stringify(seen);
      },
      async change() {
        // An edit of the first message, a regenerate, a plain send: the ids every user's chats share.
        await saveChat(store, key("chat-1"), [text("u1", "user", "edited"), text("a2", "assistant", "again")], {
          request: { trigger: "submit-message", messageId: "u1" },
        });
        await saveChat(store, key("chat-2"), [text("u1", "user", `chat-2 says ${said}`), text("a3", "assistant", "regenerated")], {
          request: { trigger: "regenerate-message" },
        });
        await saveChat(store, key("chat-2"), [text("u4", "user", "one more")]);
      },
    };
  },
};

const stores: [string, () => HistoryStore][] = [
  ["in-memory", () => createInMemoryStore()],
  ["SQLite", () => createSqliteStore({ path: join(dir, `${randomUUID()}.db`) })],
  ["PostgreSQL", () => createPostgresStore({ connectionString: inject("databaseUrl"), tablePrefix: `door${randomUUID().slice(0, 8)}_`, maxConnections: 2 })],
  ["Redis", () => createRedisStore({ url: inject("redisUrl"), keyPrefix: `door${randomUUID().slice(0, 8)}:` })],
];
for (const [name, createStore] of stores) doorIsolationSuite({ name, createStore: async () => createStore() }, chatDoor);
