import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, encodeMessage } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";
import { afterAll, describe, expect, it } from "vitest";
import { type TokenCounter, compactToolResults, tiktokenCounter, toolResultCompaction } from "../src/index.js";
import { memoryTools } from "../src/tools.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-compaction-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const key = { userId: "ada", conversationId: "research" };
const count = tiktokenCounter();

/** A tool-heavy session: 50 turns, each with 4 tool calls whose results are long. */
function session(): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = 0; turn < 50; turn++) {
    messages.push(new HumanMessage(`Look up the prices for batch ${turn}`));
    for (let call = 0; call < 4; call++) {
      const id = `call_${turn}_${call}`;
      messages.push(new AIMessage({ content: "", tool_calls: [{ id, name: "lookup", args: { batch: turn, item: call } }] }));
      messages.push(new ToolMessage({ content: `result ${turn}.${call}: ${"price 12.50 EUR, in stock; ".repeat(40)}`, tool_call_id: id, name: "lookup" }));
    }
    messages.push(new AIMessage(`Batch ${turn} is in stock.`));
  }
  return messages;
}

/** Every tool call answered by a result right after its message, and every result answering a call: what every provider requires. */
function expectValidPairs(messages: readonly BaseMessage[]): void {
  let open: string[] = [];
  for (const message of messages) {
    if (ToolMessage.isInstance(message)) {
      expect(open).toContain(message.tool_call_id);
      open = open.filter((id) => id !== message.tool_call_id);
      continue;
    }
    expect(open, "a call without its result").toEqual([]);
    open = ((message as AIMessage).tool_calls ?? []).map((call) => call.id as string);
  }
  expect(open).toEqual([]);
}

describe("tool result compaction", () => {
  it("keeps a 200-tool-call session under the budget, every call paired, the stored history byte for byte the same", async () => {
    const store = createSqliteStore({ path: join(dir, "compaction.db") });
    await store.append(key, session());
    const before = JSON.stringify((await store.read(key)).map(encodeMessage));
    const whole = await count(await store.read(key));
    const strategy = toolResultCompaction({ maxTokens: 8_000 });
    const seen: BaseMessage[][] = [];
    const chat = new RunnableWithMessageHistory({
      runnable: RunnableLambda.from((messages: BaseMessage[]) => {
        seen.push(messages);
        return new AIMessage("Done.");
      }),
      store,
      memory: strategy,
      sessionFields: ["userId", "conversationId"],
    });
    await chat.invoke("And batch 51?", { configurable: key });
    const prompt = seen[0] as BaseMessage[];
    const history = prompt.slice(0, -1);
    expect(whole).toBeGreaterThan(50_000);
    expect(await count(history)).toBeLessThanOrEqual(8_000);
    expectValidPairs(history);
    // Stubs first; then the oldest whole turns were left out, at a turn's start.
    expect(history[0]?.getType()).toBe("human");
    // The newest three results whole; older ones are stubs saying how to read them back.
    const results = history.filter((message) => ToolMessage.isInstance(message)) as ToolMessage[];
    expect(results.slice(-3).every((result) => String(result.content).startsWith("result 49."))).toBe(true);
    const first = results[0] as ToolMessage;
    const position = Number(/from (\d+) limit 1\]$/.exec(String(first.content))?.[1]);
    expect(first.content).toMatch(
      new RegExp(
        `^\\[lookup result \\(call ${first.tool_call_id}, 1,0\\d\\d characters\\) left out; stored: read_conversation "conversationId=research&userId=ada" from ${position} limit 1\\]$`,
      ),
    );
    // Nothing stored changed but the new turn.
    const after = (await store.read(key)).map(encodeMessage);
    expect(JSON.stringify(after.slice(0, -2))).toBe(before);
    expect(after).toHaveLength(502);
    // The stub's directions work: read_conversation gives the original back.
    const [read] = memoryTools({ store, scope: ["userId"], tools: ["read_conversation"] });
    const original = await read!.invoke({ conversation: "conversationId=research&userId=ada", from: position, limit: 1 }, { configurable: key });
    const [turn, call] = first.tool_call_id.split("_").slice(1);
    expect(String(original)).toContain(`[${position}] Tool: result ${turn}.${call}: price 12.50 EUR`);
    await store.close();
  }, 120_000); // CPU-bound: a loaded CI machine runs it several times slower than an idle one

  it("in steps (stepTokens), a provider's prompt cache matches most of each prompt past the budget; without, much less", async () => {
    const all = session();
    const chars: TokenCounter = (messages) => messages.reduce((sum, message) => sum + Math.ceil(String(message.content).length / 4) + 4, 0);
    const maxTokens = 8_000;
    /** The share of the tokens sent after the first 10 turns that the previous prompt's cache would match, the conversation growing a turn (10 messages) at a time. */
    async function matched(stepTokens: number | undefined): Promise<number> {
      const options = { maxTokens, tokenCounter: chars, ...(stepTokens === undefined ? {} : { stepTokens }) };
      let previous: BaseMessage[] = [];
      let sent = 0;
      let same = 0;
      for (let end = 10; end <= all.length; end += 10) {
        const prompt = await compactToolResults(all.slice(0, end), options);
        expect(await chars(prompt)).toBeLessThanOrEqual(maxTokens);
        expectValidPairs(prompt);
        // The longest prefix the new prompt shares with the last one: what a prompt cache matches.
        let prefix = 0;
        while (prefix < Math.min(previous.length, prompt.length) && JSON.stringify(prompt[prefix]) === JSON.stringify(previous[prefix])) prefix++;
        if (end > 100) {
          sent += await chars(prompt);
          same += await chars(prompt.slice(0, prefix));
        }
        previous = prompt;
      }
      return same / sent;
    }
    const stepped = await matched(undefined); // maxTokens / 2
    const tightest = await matched(0);
    // Each turn here adds 4 results of 270 tokens (14% of the budget): steps of half the budget come every 3 to 4 turns.
    expect(stepped).toBeGreaterThan(0.7);
    expect(tightest).toBeLessThan(0.5);
  }, 120_000); // CPU-bound: a loaded CI machine runs it several times slower than an idle one

  it("leaves messages under the budget alone, and a result shorter than its stub whole", async () => {
    const short = [new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "t", args: {} }] }), new ToolMessage({ content: "ok", tool_call_id: "c1" })];
    expect(await compactToolResults(short, { maxTokens: 10_000 })).toEqual(short);
    const call = (id: string) => new AIMessage({ content: "", tool_calls: [{ id, name: "t", args: {} }] });
    const mixed = [
      call("c1"),
      new ToolMessage({ content: "ok", tool_call_id: "c1" }),
      call("c2"),
      new ToolMessage({ content: "long ".repeat(500), tool_call_id: "c2" }),
    ];
    const fitted = await compactToolResults(mixed, { maxTokens: 120, keepLast: 0 });
    expect(fitted[1]?.content).toBe("ok");
    expect(fitted[3]?.content).toBe("[tool result (call c2, 2,500 characters) left out; stored: message 3 of this conversation]");
    expect(mixed[3]?.content).toBe("long ".repeat(500)); // the messages given are not changed
    await expect(compactToolResults(short, { maxTokens: 0 })).rejects.toThrow(/maxTokens must be > 0/);
    expect(() => toolResultCompaction({ maxTokens: 100, keepLast: -1 })).toThrow(/keepLast must be a whole number/);
    expect(() => toolResultCompaction({ maxTokens: 100, stepTokens: -1 })).toThrow(/stepTokens must be >= 0/);
  });
});
