import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type HistoryStore, MemoriaError, createInMemoryStore } from "@memoria/core";
import { encryptStore } from "@memoria/privacy";
import { createSqliteStore } from "@memoria/sql";
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { chatSaver, loadChat, saveChat } from "../src/index.js";
import { answer, everyPart, userMessage } from "./fixtures.js";

const key = { userId: "u1", sessionId: "chat-1" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function sqlite(): HistoryStore {
  const dir = mkdtempSync(join(tmpdir(), "memoria-ai-sdk-"));
  const store = createSqliteStore({ path: join(dir, "chat.db") });
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

const stores: [string, () => HistoryStore][] = [
  ["in-memory", () => createInMemoryStore()],
  ["sqlite", sqlite],
  ["sqlite through encryptStore", () => encryptStore(sqlite(), { keys: { k1: Buffer.alloc(32, 7) }, activeKeyId: "k1" })],
];

describe.each(stores)("UI messages on %s", (_name, open) => {
  it("round-trips every kind of part, every tool state and the metadata exactly", async () => {
    const store = open();
    const chat = everyPart();
    const saved = await saveChat(store, key, chat);
    expect(saved).toMatchObject({ added: 3, updated: 0, removed: 0 });
    const loaded = await loadChat(store, key);
    expect(loaded.messages).toEqual(chat);
    expect(loaded).toMatchObject({ invalid: [], partial: [], hasMore: false });
  });

  it("stores the chat as the conversation LangChain would: text as content, each finished call an AI tool call and its ToolMessage", async () => {
    const store = open();
    await saveChat(store, key, everyPart());
    const stored = await store.read(key);
    expect(stored.map((message) => message.getType())).toEqual(["system", "human", "ai", "tool", "tool", "ai", "tool", "tool", "ai"]);
    const [, user, step1, weather, search, step2, clock, denied] = stored as [
      unknown,
      HumanMessage,
      AIMessage,
      ToolMessage,
      ToolMessage,
      AIMessage,
      ToolMessage,
      ToolMessage,
    ];
    expect(user.content).toEqual([
      { type: "text", text: "What is the weather in Paris? Look at this." },
      { type: "text", text: "And a second paragraph." },
    ]);
    expect(step1.content).toBe("Let me look.");
    expect(step1.tool_calls?.map((call) => [call.id, call.name, call.args])).toEqual([
      ["call-1", "weather", { city: "Paris" }],
      ["call-2", "search", { query: "paris weather" }],
    ]);
    expect([weather.tool_call_id, weather.content, weather.status ?? "success"]).toEqual(["call-1", '{"temperature":18,"sky":"clear"}', "success"]);
    expect([search.content, search.status]).toEqual(["search is down", "error"]);
    expect(step2.tool_calls?.map((call) => call.name)).toEqual(["clock", "delete"]);
    expect(clock.content).toBe("14:02");
    expect([denied.content, denied.status]).toEqual(["The tool call was denied: never", "error"]);
    expect((stored[8] as AIMessage).content).toBe("It is 18 degrees and clear.");
  });

  it("saves each message once: the same list again, or retried, stores nothing", async () => {
    const store = open();
    const chat = [userMessage("u1", "hi"), answer("a1", "hello")];
    await saveChat(store, key, chat);
    // A plain question and its answer are stored as LangChain stores them, with their ids and nothing more.
    expect((await store.read(key, { sealed: true })).map((message) => [message.id, message.additional_kwargs])).toEqual(
      _name.includes("encrypt")
        ? expect.any(Array)
        : [
            ["u1", {}],
            ["a1", {}],
          ],
    );
    const before = await store.count(key);
    expect(await saveChat(store, key, chat)).toMatchObject({ added: 0, updated: 0, removed: 0 });
    await Promise.all([saveChat(store, key, [...chat, userMessage("u2", "again")]), saveChat(store, key, [...chat, userMessage("u2", "again")])]);
    expect(await store.count(key)).toBe(before + 1);
  });

  it("compares a message sent back as JSON would: keys in another order, undefined fields are the same message; a changed value is an update", async () => {
    const store = open();
    const sent: UIMessage = { ...answer("a1", "hello"), metadata: { model: "m", usage: { in: 3, out: 5 } } };
    await saveChat(store, key, [userMessage("u1", "hi"), sent]);
    const [question, stored] = (await loadChat(store, key)).messages as [UIMessage, UIMessage];
    const reordered = {
      parts: stored.parts.map((part) => Object.fromEntries(Object.entries(part).reverse())),
      role: "assistant",
      id: "a1",
      extra: undefined,
      metadata: { usage: { out: 5, in: 3 }, model: "m" },
    } as unknown as UIMessage;
    expect(await saveChat(store, key, [structuredClone(question), reordered])).toMatchObject({ added: 0, updated: 0 });
    const changed = { ...reordered, metadata: { usage: { out: 6, in: 3 }, model: "m" } } as UIMessage;
    expect(await saveChat(store, key, [question, changed])).toMatchObject({ added: 0, updated: 1 });
    expect((await loadChat(store, key)).messages[1]?.metadata).toEqual({ model: "m", usage: { in: 3, out: 6 } });
  });
  it("replaces an answer continued under the same id (a tool result or an approval added) in place", async () => {
    const store = open();
    const waiting: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "step-start" }, { type: "tool-book", toolCallId: "c1", state: "input-available", input: { table: 2 } }] as UIMessage["parts"],
    };
    await saveChat(store, key, [userMessage("u1", "book a table"), waiting]);
    const done: UIMessage = {
      ...waiting,
      parts: [
        { type: "step-start" },
        { type: "tool-book", toolCallId: "c1", state: "output-available", input: { table: 2 }, output: { booked: true } },
        { type: "step-start" },
        { type: "text", text: "Booked.", state: "done" },
      ] as UIMessage["parts"],
    };
    expect(await saveChat(store, key, [userMessage("u1", "book a table"), done])).toMatchObject({ added: 0, updated: 1 });
    expect((await loadChat(store, key)).messages).toEqual([userMessage("u1", "book a table"), done]);
  });

  it("on regenerate, removes the answer being replaced; otherwise never removes what a stale list lacks", async () => {
    const store = open();
    await saveChat(store, key, [userMessage("u1", "hi"), answer("a1", "first try")]);
    const regenerated = [userMessage("u1", "hi"), answer("a2", "second try")];
    expect(await saveChat(store, key, regenerated, { regenerate: true })).toMatchObject({ added: 1, removed: 1 });
    expect((await loadChat(store, key)).messages).toEqual(regenerated);
    // A second tab that never saw u2/a3 sends u3: both tabs' messages are kept.
    await saveChat(store, key, [...regenerated, userMessage("u2", "tab one"), answer("a3", "one")]);
    expect(await saveChat(store, key, [...regenerated, userMessage("u3", "tab two")])).toMatchObject({ added: 1, removed: 0 });
    expect((await loadChat(store, key)).messages.map((message) => message.id)).toEqual(["u1", "a2", "u2", "a3", "u3"]);
  });

  it("a new answer to the newest shared user message (the request sent again) replaces the stored one", async () => {
    const store = open();
    await saveChat(store, key, [userMessage("u1", "hi"), answer("a1", "hello"), userMessage("u2", "and?"), answer("a2", "first answer")]);
    const retried = [userMessage("u1", "hi"), answer("a1", "hello"), userMessage("u2", "and?"), answer("a2-again", "second answer")];
    expect(await saveChat(store, key, retried)).toMatchObject({ added: 1, removed: 1 });
    expect((await loadChat(store, key)).messages).toEqual(retried);
  });

  it("saves racing on one chat (a request sent again while the first runs, two tabs) all land, each message once", async () => {
    const store = open();
    const base = [userMessage("u1", "hi"), answer("a1", "hello")];
    await saveChat(store, key, base);
    await Promise.all([
      saveChat(store, key, [...base, userMessage("u2", "and?"), answer("a2", "first")]),
      saveChat(store, key, [...base, userMessage("u2", "and?"), answer("a2-again", "second")]),
    ]);
    const after = (await loadChat(store, key)).messages.map((message) => message.id);
    expect(after.slice(0, 3)).toEqual(["u1", "a1", "u2"]);
    expect(after).toHaveLength(4);
    await Promise.all([saveChat(store, key, [userMessage("t1", "tab one")]), saveChat(store, key, [userMessage("t2", "tab two")])]);
    expect(
      (await loadChat(store, key)).messages
        .map((message) => message.id)
        .slice(4)
        .sort(),
    ).toEqual(["t1", "t2"]);
  });

  it("plans from the loaded chat without reading again, and stays right when the chat changed since the load", async () => {
    const store = open();
    const base = [userMessage("u1", "hi"), answer("a1", "hello")];
    await saveChat(store, key, base);
    const loaded = await loadChat(store, key);
    expect(Object.keys(loaded)).toEqual(["messages", "invalid", "partial", "hasMore"]);
    // Meanwhile the same request, sent again, stored its question and an answer.
    await saveChat(store, key, [...base, userMessage("u2", "and?"), answer("a2", "first")]);
    const reads: unknown[] = [];
    const read = store.read.bind(store);
    store.read = (sessionKey, options) => {
      reads.push(options);
      return read(sessionKey, options);
    };
    expect(await saveChat(store, key, [...loaded.messages, userMessage("u2", "and?"), answer("a2-again", "second")], { loaded })).toMatchObject({
      added: 1,
      removed: 1,
    });
    expect((await loadChat(store, key)).messages.map((message) => message.id)).toEqual(["u1", "a1", "u2", "a2-again"]);
    expect(reads.length).toBe(2); // the refused stale plan read again once, then the check above
    reads.length = 0;
    const fresh = await loadChat(store, key);
    await saveChat(store, key, [...fresh.messages, userMessage("u3", "more"), answer("a3", "sure")], { loaded: fresh });
    expect(reads.length).toBe(1); // the load only
  });

  it("keeps only the end of a long loaded chat for the save; a save that reaches further back reads it", async () => {
    const store = open();
    const long = Array.from({ length: 200 }, (_, index) => (index % 2 === 0 ? userMessage(`u${index}`, `q${index}`) : answer(`a${index}`, `r${index}`)));
    await saveChat(store, key, long);
    const loaded = await loadChat(store, key);
    const reads: unknown[] = [];
    const read = store.read.bind(store);
    store.read = (sessionKey, options) => {
      reads.push(options);
      return read(sessionKey, options);
    };
    // The usual turn plans from what the load kept, with no read.
    await saveChat(store, key, [...loaded.messages, userMessage("u200", "one more")], { loaded });
    expect(reads).toEqual([]);
    // Regenerating an answer far back reaches past what the load kept, so it reads; everything the list dropped after it goes, as on a fresh read.
    const fresh = await loadChat(store, key);
    reads.length = 0;
    const result = await saveChat(store, key, [...fresh.messages.slice(0, 11), answer("a11-new", "again")], { loaded: fresh, regenerate: true });
    expect(reads.length).toBeGreaterThan(0); // windows from the end, growing until they reach the answer
    expect(result).toMatchObject({ added: 1, removed: 190 });
    expect((await loadChat(store, key)).messages.map((message) => message.id)).toEqual([...long.slice(0, 11).map((message) => message.id), "a11-new"]);
  });

  it("reports an answer saved cut short as partial", async () => {
    const store = open();
    await saveChat(store, key, [userMessage("u1", "tell me a story"), answer("a1", "Once upon")], { partial: { id: "a1", reason: "cancelled" } });
    const loaded = await loadChat(store, key);
    expect(loaded.partial).toEqual(["a1"]);
    expect(loaded.messages[1]).toEqual(answer("a1", "Once upon"));
  });

  it("refuses a malformed list with a typed error naming the message, writing nothing", async () => {
    const store = open();
    const cases: unknown[][] = [
      [{ role: "user", parts: [] }],
      [{ id: "", role: "user", parts: [] }],
      [{ id: "x", role: "robot", parts: [] }],
      [{ id: "x", role: "user", parts: "hi" }],
      [{ id: "x", role: "user", parts: [{ text: "no type" }] }],
      [{ id: "x", role: "user", parts: [{ type: "text", text: 5 }] }],
      [userMessage("same", "a"), userMessage("same", "b")],
    ];
    for (const messages of cases) {
      const error = await saveChat(store, key, messages as UIMessage[]).catch((caught: unknown) => caught);
      expect(MemoriaError.isInstance(error) && error.code).toBe("INVALID_MESSAGE");
    }
    expect(await store.count(key)).toBe(0);
  });
});

describe("loading", () => {
  it("sets aside a stored message that no longer validates, or keeps it upgraded, without failing the chat", async () => {
    const store = createInMemoryStore();
    const oldCall: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "tool-weather", toolCallId: "c1", state: "output-available", input: { town: "Paris" }, output: { c: 18 } }] as UIMessage["parts"],
    };
    await saveChat(store, key, [userMessage("u1", "weather?"), oldCall, userMessage("u2", "thanks")]);
    const tools = { weather: { inputSchema: z.object({ city: z.string() }) } };
    const skipped = await loadChat(store, key, { tools });
    expect(skipped.messages.map((message) => message.id)).toEqual(["u1", "u2"]);
    expect(skipped.invalid).toEqual([{ id: "a1", error: expect.any(Error), upgraded: false }]);
    const upgraded = await loadChat(store, key, {
      tools,
      onInvalid: (message) => ({
        ...message,
        parts: message.parts.map((part) => (part.type === "tool-weather" ? { ...part, input: { city: (part.input as { town: string }).town } } : part)),
      }),
    });
    expect(upgraded.messages.map((message) => message.id)).toEqual(["u1", "a1", "u2"]);
    expect(upgraded.invalid).toEqual([{ id: "a1", error: expect.any(Error), upgraded: true }]);
  });

  it("pages back through a long chat, reading from the end only as far as the page", async () => {
    const store = createInMemoryStore();
    const chat = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? userMessage(`m${i}`, `question ${i}`) : answer(`m${i}`, `answer ${i}`)));
    await saveChat(store, key, chat);
    const first = await loadChat(store, key, { last: 10 });
    expect(first.messages).toEqual(chat.slice(90));
    expect(first.hasMore).toBe(true);
    const second = await loadChat(store, key, { last: 10, before: "m90" });
    expect(second.messages).toEqual(chat.slice(80, 90));
    const oldest = await loadChat(store, key, { last: 30, before: "m20" });
    expect(oldest.messages).toEqual(chat.slice(0, 20));
    expect(oldest.hasMore).toBe(false);
    await expect(loadChat(store, key, { last: 10, before: "nope" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(loadChat(store, key, { last: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("saves a turn of a long chat reading only the end of the session", async () => {
    const store = createInMemoryStore();
    const chat = Array.from({ length: 2_000 }, (_, i) => (i % 2 === 0 ? userMessage(`m${i}`, `q${i}`) : answer(`m${i}`, `a${i}`)));
    await saveChat(store, key, chat);
    const reads: (number | undefined)[] = [];
    const read = store.read.bind(store);
    store.read = (sessionKey, options) => {
      reads.push(options?.last);
      return read(sessionKey, options);
    };
    await saveChat(store, key, [...chat, userMessage("new", "one more"), answer("new-a", "sure")]);
    expect(reads).toHaveLength(1);
    expect(reads[0]).toBeLessThanOrEqual(32);
    expect(await store.count(key)).toBe(2_002);
  });

  it("loads a conversation LangChain wrote as UI messages: an AI step and its tool results as one answer", async () => {
    const store = createInMemoryStore();
    await store.append(key, [
      new HumanMessage("weather in Paris?"),
      new AIMessage({ id: "run-1", content: "", tool_calls: [{ id: "t1", name: "weather", args: { city: "Paris" } }] }),
      new ToolMessage({ content: '{"c":18}', tool_call_id: "t1" }),
      new AIMessage({ id: "run-2", content: "18 degrees." }),
    ]);
    const { messages } = await loadChat(store, key);
    expect(messages).toEqual([
      { id: "lc-0", role: "user", parts: [{ type: "text", text: "weather in Paris?" }] },
      {
        id: "run-1",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "dynamic-tool", toolName: "weather", toolCallId: "t1", state: "output-available", input: { city: "Paris" }, output: { c: 18 } },
          { type: "step-start" },
          { type: "text", text: "18 degrees.", state: "done" },
        ],
      },
    ]);
  });

  it("keeps answers apart: an AI step joins the answer before it only after tool calls or results", async () => {
    const store = createInMemoryStore();
    const list = [userMessage("u1", "hi"), answer("a1", "hello"), answer("a2", "and welcome back"), userMessage("u2", "thanks"), answer("a3", "any time")];
    await saveChat(store, key, list);
    await store.append(key, [new AIMessage({ id: "run-9", content: "one more thing" })]);
    const { messages } = await loadChat(store, key);
    expect(messages.map((message) => message.id)).toEqual(["u1", "a1", "a2", "u2", "a3", "run-9"]);
    expect(messages.slice(0, 5)).toEqual(list);
    // Only a first answer after a question goes without its record: a2 keeps `{}`, so it cannot be taken for a step of a1.
    expect((await store.read(key)).map((message) => Object.keys(message.additional_kwargs))).toEqual([[], [], ["ui_message"], [], [], []]);
  });

  it("reads a plain message stored with an empty record (`ui_message: {}`) as the same message", async () => {
    const store = createInMemoryStore();
    const marked = { additional_kwargs: { ui_message: {} } };
    await store.append(key, [new HumanMessage({ id: "u1", content: "hi", ...marked }), new AIMessage({ id: "a1", content: "hello", ...marked })]);
    expect((await loadChat(store, key)).messages).toEqual([userMessage("u1", "hi"), answer("a1", "hello")]);
    expect(await saveChat(store, key, [userMessage("u1", "hi"), answer("a1", "hello")])).toMatchObject({ added: 0, updated: 0 });
  });
});

describe("chatSaver", () => {
  const finish = (messages: UIMessage[], flags: { isAborted?: boolean; isCancelled?: true } = {}) => ({
    messages,
    responseMessage: messages.at(-1) as UIMessage,
    isContinuation: false,
    isAborted: flags.isAborted ?? false,
    ...(flags.isCancelled ? { isCancelled: flags.isCancelled } : {}),
    outcome: undefined as never,
  });

  it("never rejects: a failed save becomes a process warning naming the typed error", async () => {
    const store = createInMemoryStore();
    await store.close();
    const warnings: Error[] = [];
    const listen = (warning: Error) => warnings.push(warning);
    process.on("warning", listen);
    try {
      await expect(chatSaver(store, key)(finish([userMessage("u1", "hi"), answer("a1", "hello")]))).resolves.toBeUndefined();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", listen);
    }
    expect(warnings.map((warning) => [warning.name, (warning as { code?: string }).code])).toEqual([["MemoriaWarning", "STORE_CLOSED"]]);
  });

  it("schedules the memory's work once the turn is stored; its failure goes to onMemoryError and the turn stays stored", async () => {
    const store = createInMemoryStore();
    const seen: unknown[] = [];
    const failures: unknown[] = [];
    const memory = {
      name: "probe",
      load: async () => [],
      afterSave: async (context: { added: readonly { text: string }[] }) => {
        seen.push(context.added.map((message) => message.text));
        throw new Error("extraction down");
      },
    };
    await chatSaver(store, key, { memory, onMemoryError: (error) => void failures.push(error) })(finish([userMessage("u1", "hi"), answer("a1", "hello")]));
    expect(seen).toEqual([["hi", "hello"]]);
    expect(failures.map((error) => (error as Error).message)).toEqual(["extraction down"]);
    expect(await store.count(key)).toBe(2);
  });

  it("applies the cancel policy as the wrapper does", async () => {
    const stopped = [userMessage("u1", "story?"), answer("a1", "Once")];
    const partial = createInMemoryStore();
    await chatSaver(partial, key)(finish(stopped, { isAborted: true }));
    expect((await loadChat(partial, key)).partial).toEqual(["a1"]);
    const input = createInMemoryStore();
    await chatSaver(input, key, { saveOnCancel: "input" })(finish(stopped, { isCancelled: true }));
    expect((await loadChat(input, key)).messages.map((message) => message.id)).toEqual(["u1"]);
    const nothing = createInMemoryStore();
    await chatSaver(nothing, key, { saveOnCancel: "nothing" })(finish(stopped, { isAborted: true }));
    expect(await nothing.count(key)).toBe(0);
    expect(() => chatSaver(nothing, key, { saveOnCancel: "all" as never })).toThrow(/saveOnCancel/);
  });
});
