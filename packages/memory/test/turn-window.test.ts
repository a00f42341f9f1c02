import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { cutToFit, tiktokenCounter, turnStarts } from "../src/index.js";

/** The reference: try every turn start, earliest first. */
async function cutByScan(messages: BaseMessage[], budget: number, count: (m: BaseMessage[]) => number | Promise<number>) {
  if ((await count(messages)) <= budget) return 0;
  for (const start of turnStarts(messages)) if (start > 0 && (await count(messages.slice(start))) <= budget) return start;
  return messages.length;
}

describe("cutToFit", () => {
  it("finds the same cut as trying every turn, with far fewer counts", async () => {
    const count = tiktokenCounter();
    const messages: BaseMessage[] = [];
    for (let i = 0; i < 60; i++) {
      messages.push(new HumanMessage(`question ${i} ${"word ".repeat(i % 7)}`));
      if (i % 5 === 0) {
        messages.push(new AIMessage({ content: "", tool_calls: [{ id: `c${i}`, name: "f", args: {}, type: "tool_call" }] }));
        messages.push(new ToolMessage({ content: "result", tool_call_id: `c${i}` }));
      }
      messages.push(new AIMessage(`answer ${i}`));
    }
    let calls = 0;
    const counted = (m: readonly BaseMessage[]) => {
      calls++;
      return count(m);
    };
    for (const budget of [0, 5, 30, 100, 333, 800, 5_000]) {
      calls = 0;
      expect(await cutToFit(messages, budget, counted)).toBe(await cutByScan(messages, budget, count));
      expect(calls).toBeLessThanOrEqual(8); // one full count, then about log2(60)
    }
  }, 120_000); // CPU-bound: a loaded CI machine runs it several times slower than an idle one
});
