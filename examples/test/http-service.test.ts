import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore } from "@memoria/sql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatService, supportMayRead } from "../src/http-service/chat-service.js";
import { OfflineChatModel } from "../src/offline-model.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-http-"));
const store = createSqliteStore({ path: join(dir, "service.db") });
const users = new Map([
  ["alice-token", "alice"],
  ["bob-token", "bob"],
  ["support-token", "support"],
  ...Array.from({ length: 300 }, (_, i) => [`load-${i}`, `user-${i}`] as [string, string]),
]);
const server = createChatService({
  store,
  model: new OfflineChatModel({}),
  authenticate: (token) => users.get(token),
  authorize: supportMayRead(new Set(["support"])),
});
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function chat(token: string | undefined, body: unknown) {
  return fetch(`${base}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
}

async function get(token: string, path: string) {
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("chat service", () => {
  it("streams the answer in chunks and remembers the conversation", async () => {
    await (await chat("alice-token", { conversationId: "c1", message: "My name is Alice" })).text();
    const response = await chat("alice-token", { conversationId: "c1", message: "What is my name?" });
    expect(response.status).toBe(200);
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) chunks.push(decoder.decode(chunk));
    expect(chunks.join("")).toContain("Your name is Alice. I was given 2 earlier messages.");
  });

  it("never lets one user read or write another's conversation, even with the same id or a userId in the body", async () => {
    const answer = await (await chat("bob-token", { conversationId: "c1", userId: "alice", message: "What is my name?" })).text();
    expect(answer).toContain("I don't know your name");
    const bobs = await get("bob-token", "/conversations/c1/messages");
    expect((bobs.body.messages as unknown[]).length).toBe(2);
    const alices = await get("alice-token", "/conversations/c1/messages");
    expect(alices.body.messages).toHaveLength(4);
    expect(JSON.stringify(alices.body)).not.toContain("bob");
    expect((await get("bob-token", "/conversations")).body.conversations).toEqual(["c1"]);
  });

  it("asks the authorize hook before every store call: support reads anyone's conversation, a user only their own", async () => {
    expect((await get("alice-token", "/users/bob/conversations/c1/messages")).status).toBe(403);
    const read = await get("support-token", "/users/alice/conversations/c1/messages");
    expect(read.status).toBe(200);
    expect(read.body.messages).toHaveLength(4);
    expect((await get("alice-token", "/users/alice/conversations/c1/messages")).body.messages).toHaveLength(4);
    // Support may read, not write: a chat turn is its own session, so it cannot name alice's.
    expect((await (await chat("support-token", { conversationId: "c1", message: "hello" })).text()).length).toBeGreaterThan(0);
    expect((await get("alice-token", "/conversations/c1/messages")).body.messages).toHaveLength(4);
  });

  it("refuses requests without a known token, and bad conversation ids, writing nothing", async () => {
    expect((await chat(undefined, { conversationId: "c1", message: "hi" })).status).toBe(401);
    expect((await chat("forged", { conversationId: "c1", message: "hi" })).status).toBe(401);
    for (const conversationId of ["", "a\nb", "x".repeat(300), 7.5, true, undefined]) {
      const response = await chat("alice-token", { conversationId, message: "hi" });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain("conversationId");
    }
    expect((await get("alice-token", "/conversations")).body.conversations).toEqual(["c1"]);
    const malformed = await get("alice-token", "/conversations/%E0%A4%A/messages");
    expect(malformed).toEqual({ status: 400, body: { error: "malformed percent-encoding in the path" } });
  });

  it("serves 300 concurrent conversations with nothing lost (bounded load test on loopback)", async () => {
    const conversations = Array.from({ length: 300 }, (_, i) => i);
    const turn = async (i: number, message: string) => (await chat(`load-${i}`, { conversationId: `conv-${i}`, message })).text();
    await Promise.all(conversations.map((i) => turn(i, `My name is User${i}`)));
    const answers = await Promise.all(conversations.map((i) => turn(i, "What is my name?")));
    for (const [i, answer] of answers.entries()) expect(answer).toContain(`Your name is User${i}. I was given 2 earlier messages.`);
    for (const i of [0, 150, 299]) expect(await store.count({ userId: `user-${i}`, conversationId: `conv-${i}` })).toBe(4);
  }, 90_000);
});
