import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { patternRedactor, redactStore } from "../src/index.js";

const redact = patternRedactor();

describe("patternRedactor", () => {
  it.each([
    ["write to ada.lovelace+notes@example.co.uk today", "write to [email removed] today"],
    ["card 4111 1111 1111 1111 exp 12/29", "card [card removed] exp 12/29"],
    ["card 4111-1111-1111-1111", "card [card removed]"],
    ["IBAN GB82 WEST 1234 5698 7654 32 please", "IBAN [iban removed] please"],
    ["call +44 20 7946 0958 now", "call [phone removed] now"],
    ["ssn 078-05-1120", "ssn [ssn removed]"],
  ])("masks %j", (text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it.each([
    "order 4111 1111 1111 1112 (fails the Luhn check)",
    "GB82 WEST 1234 5698 7654 33 (fails mod 97)",
    "the year 2026, 42 apples, version 1.2.3",
    "an id 550e8400-e29b-41d4-a716-446655440000",
    // Its last two groups are 16 digits that pass the Luhn check (a LangGraph checkpoint id that was masked in part once).
    "checkpoint 1f1e9c23-53a0-6c81-8003-006177869457",
    "1F1E9C23-53A0-6C81-8003-006177869457",
  ])("leaves look-alikes alone: %j", (text) => {
    expect(redact(text)).toBe(text);
  });

  it("still masks a card written beside a UUID", () => {
    expect(redact("run 1f1e9c23-53a0-6c81-8003-006177869457 paid with 4111 1111 1111 1111")).toBe(
      "run 1f1e9c23-53a0-6c81-8003-006177869457 paid with [card removed]",
    );
    expect(redact("4111111111111111-1f1e9c23-53a0-6c81-8003-006177869457")).toBe("[card removed]-1f1e9c23-53a0-6c81-8003-006177869457");
  });

  it("takes a subset of kinds and a replacement", () => {
    const only = patternRedactor({ kinds: ["email"], replacement: (kind) => `<${kind}>` });
    expect(only("a@b.io and 078-05-1120")).toBe("<email> and 078-05-1120");
    expect(() => patternRedactor({ kinds: ["passport" as never] })).toThrow(/Unknown redaction pattern "passport"/);
  });
});

describe("redactStore", () => {
  it("stores masked text while the turn that said it gives the model the original", async () => {
    const store = redactStore(createInMemoryStore());
    const seen: string[][] = [];
    const chain = new RunnableWithMessageHistory({
      store,
      runnable: RunnableLambda.from(async (messages: BaseMessage[]) => {
        seen.push(messages.map((m) => String(m.content)));
        return "noted";
      }),
    });
    const config = { configurable: { sessionId: "s1" } };
    await chain.invoke("my email is ada@example.com", config);
    await chain.invoke("what is my email?", config);
    expect(seen[0]).toEqual(["my email is ada@example.com"]);
    expect(seen[1]).toEqual(["my email is [email removed]", "noted", "what is my email?"]);
    expect((await store.inner.read({ sessionId: "s1" }))[0]!.content).toBe("my email is [email removed]");
  });

  it("masks text blocks, tool-call arguments and state, and keeps ids, names and other blocks", async () => {
    const store = redactStore(createInMemoryStore());
    const key = { sessionId: "s2" };
    await store.append(key, [
      new HumanMessage({
        id: "h1",
        content: [
          { type: "text", text: "mail bob@example.org" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      }),
      new AIMessage({
        id: "a1",
        content: "",
        tool_calls: [{ id: "call_1", name: "send_mail", args: { to: "bob@example.org", cc: ["eve@example.org"] }, type: "tool_call" }],
      }),
    ]);
    await store.setState(key, "summary", { text: "Bob is bob@example.org", count: 2 });
    const [human, ai] = await store.read(key);
    expect(human!.id).toBe("h1");
    expect(human!.content).toEqual([
      { type: "text", text: "mail [email removed]" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ]);
    expect((ai as AIMessage).tool_calls).toEqual([
      { id: "call_1", name: "send_mail", args: { to: "[email removed]", cc: ["[email removed]"] }, type: "tool_call" },
    ]);
    expect(await store.getState(key, "summary")).toEqual({ text: "Bob is [email removed]", count: 2 });
    await store.setStates(key, { summary: { text: "Eve is eve@example.org" }, "entities.v2": ["bob@example.org"] });
    expect(await store.getAllState(key)).toEqual({ summary: { text: "Eve is [email removed]" }, "entities.v2": ["[email removed]"] });
  });

  it("refuses a redactor that does not return text, storing nothing", async () => {
    const store = redactStore(createInMemoryStore(), { redact: (() => 42) as never });
    await expect(store.append({ sessionId: "s3" }, [new HumanMessage("x")])).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(await store.count({ sessionId: "s3" })).toBe(0);
  });
});
