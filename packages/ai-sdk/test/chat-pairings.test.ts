import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createInMemoryStore } from "@memoria/core";
import { encryptStore, redactStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import type { UIMessage } from "ai";
import { afterAll, describe, expect, it } from "vitest";
import { loadChat, saveChat } from "../src/index.js";
import { everyPart } from "./fixtures.js";

// An AI SDK chat is a new kind of record (parts beside the LangChain fields): it
// has to come through memoria's other paths whole. `memoria migrate` (encrypting
// on the way), `export` / `import`, `erase`, and the redacting wrapper.

const dir = mkdtempSync(join(tmpdir(), "memoria-ai-sdk-pairings-"));
const cli = join(import.meta.dirname, "../../cli/dist/bin.js");
// Each `memoria` process loads the CLI and its stores (1-2 s here, several times that on a
// busy machine); a test that starts several gets what the CLI's own tests get.
const CLI_TIMEOUT_MS = 120_000;
const memoria = (...args: string[]) => promisify(execFile)(process.execPath, [cli, ...args]);
const key = { userId: "u1", sessionId: "chat-1" };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withStore<T>(path: string, body: (store: ReturnType<typeof createSqliteStore>) => Promise<T>): Promise<T> {
  const store = createSqliteStore({ path });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

describe("an AI SDK chat through memoria's other paths", () => {
  it(
    "comes back whole after migrate to an encrypted store, and after export and import; erase removes it",
    async () => {
      const source = join(dir, "source.db");
      await withStore(source, (store) => saveChat(store, key, everyPart()));

      const keys = { activeKeyId: "k1", keys: { k1: randomBytes(32).toString("base64") } };
      const keysFile = join(dir, "keys.json");
      writeFileSync(keysFile, JSON.stringify(keys));
      const migrated = join(dir, "migrated.db");
      await memoria("migrate", "--from", `sqlite:${source}`, "--to", `sqlite:${migrated}`, "--to-keys", keysFile);
      await withStore(migrated, async (inner) => {
        const store = encryptStore(inner, { keys: { k1: Buffer.from(keys.keys.k1, "base64") }, activeKeyId: "k1" });
        expect((await loadChat(store, key)).messages).toEqual(everyPart());
      });

      const file = join(dir, "export.jsonl");
      await memoria("export", "--store", `sqlite:${source}`, "--out", file);
      const imported = join(dir, "imported.db");
      await memoria("import", file, "--store", `sqlite:${imported}`);
      await withStore(imported, async (store) => expect((await loadChat(store, key)).messages).toEqual(everyPart()));

      await memoria("erase", "--user", "u1", "--yes", "--store", `sqlite:${imported}`);
      await withStore(imported, async (store) => {
        expect((await loadChat(store, key)).messages).toEqual([]);
        expect(await store.count(key)).toBe(0);
      });
    },
    CLI_TIMEOUT_MS,
  );

  it(
    "is a conversation in the studio: its transcript holds the question, the call, its result and the answer",
    async () => {
      const path = join(dir, "studio.db");
      await withStore(path, (store) => saveChat(store, key, everyPart()));
      const studio = spawn(process.execPath, [cli, "studio", "--store", `sqlite:${path}`], { stdio: ["ignore", "pipe", "pipe"] });
      try {
        let output = "";
        const url = await new Promise<URL>((resolve, reject) => {
          studio.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString();
            const found = /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(output)?.[0];
            if (found) resolve(new URL(found));
          });
          studio.on("exit", (code) => reject(new Error(`the studio exited (${code}): ${output}`)));
        });
        const answer = await fetch(`${url.origin}/api/transcript?key=${encodeURIComponent("sessionId=chat-1&userId=u1")}`, {
          headers: { authorization: `Bearer ${url.searchParams.get("token")}` },
        });
        const { messages } = (await answer.json()) as { messages: { type: string; data: { content: unknown; tool_calls?: { name: string }[] } }[] };
        expect(messages.map((message) => message.type)).toEqual(["system", "human", "ai", "tool", "tool", "ai", "tool", "tool", "ai"]);
        expect(messages[2]?.data.tool_calls?.map((call) => call.name)).toEqual(["weather", "search"]);
        expect(messages.at(-1)?.data.content).toBe("It is 18 degrees and clear.");
      } finally {
        studio.kill("SIGTERM");
      }
    },
    CLI_TIMEOUT_MS,
  );

  it("through redactStore: masked in text, reasoning, tool input and tool output alike, and the chat still loads", async () => {
    const store = redactStore(createInMemoryStore());
    const email = "ada@example.com";
    const chat: UIMessage[] = [
      { id: "u1", role: "user", parts: [{ type: "text", text: `Write to ${email}` }] },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "reasoning", text: `The address is ${email}.`, state: "done" },
          { type: "tool-send", toolCallId: "c1", state: "output-available", input: { to: email }, output: { sentTo: email } },
          { type: "step-start" },
          { type: "text", text: `Sent to ${email}.`, state: "done" },
        ] as UIMessage["parts"],
      },
    ];
    await saveChat(store, key, chat);
    const loaded = await loadChat(store, key);
    expect(JSON.stringify(loaded.messages)).not.toContain(email);
    expect(loaded.messages.map((message) => message.parts.map((part) => part.type))).toEqual(chat.map((message) => message.parts.map((part) => part.type)));
    const [send] = (loaded.messages[1] as UIMessage).parts.filter((part) => part.type === "tool-send") as {
      input: { to: string };
      output: { sentTo: string };
    }[];
    expect(send?.input.to).toBe("[email removed]");
    expect(send?.output.sentTo).toBe("[email removed]");
  });

  it("a redactor that breaks a tool output's JSON leaves that output as text, and the chat loads", async () => {
    const store = redactStore(createInMemoryStore(), { redact: (text) => text.replaceAll("secret", '"') });
    const answer: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "tool-look", toolCallId: "c1", state: "output-available", input: {}, output: { note: "a secret" } }] as UIMessage["parts"],
    };
    await saveChat(store, key, [{ id: "u1", role: "user", parts: [{ type: "text", text: "look" }] }, answer]);
    const [part] = ((await loadChat(store, key)).messages[1] as UIMessage).parts as { output: unknown }[];
    expect(part?.output).toBe('{"note":"a ""}');
  });
});
