import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { main as chatWithHistory } from "../src/chat-with-history.js";
import { main as promptWithHistory } from "../src/prompt-with-history.js";

async function run(main: (log: (line: string) => void) => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  await main((line) => lines.push(line));
  return lines;
}

describe("examples", () => {
  it("chat-with-history: remembers per session, forgets on clear, uses preloaded messages", async () => {
    expect(await run(chatWithHistory)).toEqual([
      '> [offline model] Nice to meet you, Ivan! I was given 0 earlier messages.',
      "> [offline model] Your name is Ivan. I was given 2 earlier messages.",
      "> [offline model] I don't know your name: nobody told me. I was given 0 earlier messages.",
      "  human: Hi! My name is Ivan. How are you?",
      "  ai: [offline model] Nice to meet you, Ivan! I was given 0 earlier messages.",
      "  human: What is my name?",
      "  ai: [offline model] Your name is Ivan. I was given 2 earlier messages.",
      "> [offline model] I don't know your name: nobody told me. I was given 0 earlier messages.",
      "> [offline model] Your name is Olga. I was given 4 earlier messages.",
    ]);
  });

  it("prompt-with-history: the system prompt holds the topic and the history fills the placeholder", async () => {
    const lines = await run(promptWithHistory);
    const system = "(system: You are an assistant who knows Python. Answer in one sentence.)";
    expect(lines).toEqual([
      "? My name is Ada. What is a list?",
      `> [offline model] ${system} Nice to meet you, Ada! I was given 0 earlier messages.`,
      "? And a tuple?",
      `> [offline model] ${system} You said: "And a tuple?". I was given 2 earlier messages.`,
      "? What is my name?",
      `> [offline model] ${system} Your name is Ada. I was given 4 earlier messages.`,
      `> [offline model] ${system} You said: "Thanks!". I was given 6 earlier messages.`,
      '(session "course" holds 8 messages)',
    ]);
  });

  it("each example runs as a program with tsx", async () => {
    for (const script of ["chat-with-history", "prompt-with-history"]) {
      const { stdout } = await promisify(execFile)("pnpm", ["exec", "tsx", `src/${script}.ts`], { cwd: `${import.meta.dirname}/..` });
      expect(stdout).toContain("[offline model]");
    }
  }, 60_000);
});
