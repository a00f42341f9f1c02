/**
 * W10: the prompt a tool-heavy conversation sends, turn after turn. LangChain's
 * RunnableWithMessageHistory (over its in-memory history) and memoria's with
 * `toolResultCompaction({ maxTokens: 8_000 })` (over the SQLite default) drive
 * the same agent-like turns; each turn's model input is counted with the same
 * tokenizer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory as LangChainWrapper, RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, memoryContext } from "@memoria/core";
import { tiktokenCounter, toolResultCompaction } from "@memoria/memory";
import { createSqliteStore } from "@memoria/sql";
import { median, timed } from "./measure.js";

export interface CompactionRow {
  turns: number;
  toolCalls: number;
  langchainTokens: number;
  memoriaTokens: number;
  memoriaLoadMs: number;
  /** Of the tokens memoria sent from turn 11 to this one, the share a prompt cache holding the previous turn's prompt matched: in steps (the default), and fitted as tightly as possible (`stepTokens: 0`). */
  cacheMatched: { stepped: number; tightest: number };
}

/** Tokens of the longest prefix `prompt` shares with `previous`: what a provider's prompt cache holding `previous` matches. */
async function matchedTokens(count: (messages: BaseMessage[]) => Promise<number> | number, prompt: BaseMessage[], previous: BaseMessage[]): Promise<number> {
  let same = 0;
  while (same < Math.min(prompt.length, previous.length) && JSON.stringify(prompt[same]) === JSON.stringify(previous[same])) same++;
  return same === 0 ? 0 : count(prompt.slice(0, same));
}

/** A turn's output: four tool calls with long results, then an answer (what an agent leaves in its history). */
function turnOutput(turn: number): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let call = 0; call < 4; call++) {
    const id = `call_${turn}_${call}`;
    out.push(new AIMessage({ content: "", tool_calls: [{ id, name: "search_docs", args: { query: `topic ${turn}.${call}` } }] }));
    out.push(
      new ToolMessage({
        content: `Results for topic ${turn}.${call}: ${"a paragraph of retrieved documentation text, ".repeat(30)}`,
        tool_call_id: id,
        name: "search_docs",
      }),
    );
  }
  out.push(new AIMessage(`Here is what I found about topic ${turn}.`));
  return out;
}

export async function compactionTokens(checkpoints: readonly number[]): Promise<CompactionRow[]> {
  const count = tiktokenCounter();
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-compaction-"));
  const store = createSqliteStore({ path: join(dir, "agent.db") });
  const histories = new Map<string, InMemoryChatMessageHistory>();
  let seen: BaseMessage[] = [];
  let turn = 0;
  // The "agent": it records its input and returns the turn's tool calls, results and answer.
  const agent = RunnableLambda.from((input: BaseMessage[]) => {
    seen = input;
    return turnOutput(turn);
  });
  const strategy = toolResultCompaction({ maxTokens: 8_000 });
  // The same history fitted as tightly as possible each turn, for the prompt-cache columns.
  const tightest = toolResultCompaction({ maxTokens: 8_000, stepTokens: 0 });
  const previous = { stepped: [] as BaseMessage[], tightest: [] as BaseMessage[] };
  const sent = { stepped: 0, tightest: 0 };
  const matched = { stepped: 0, tightest: 0 };
  const ours = new RunnableWithMessageHistory({ runnable: agent, store, memory: strategy });
  const theirs = new LangChainWrapper({
    runnable: agent,
    getMessageHistory: (id: string) => histories.get(id) ?? histories.set(id, new InMemoryChatMessageHistory()).get(id)!,
  });
  const rows: CompactionRow[] = [];
  try {
    for (turn = 0; turn < Math.max(...checkpoints); turn++) {
      const input = [new HumanMessage(`Look into topic ${turn}, please.`)];
      const mark = checkpoints.includes(turn + 1);
      await theirs.invoke(input, { configurable: { sessionId: "agent" } });
      const langchainTokens = mark ? await count(seen) : 0;
      const tight = [...(await tightest.load(memoryContext(store, { sessionId: "agent" }))), ...input];
      await ours.invoke(input, { configurable: { sessionId: "agent" } });
      for (const [side, prompt] of [
        ["stepped", seen],
        ["tightest", tight],
      ] as const) {
        if (turn >= 10) {
          sent[side] += await count(prompt);
          matched[side] += await matchedTokens(count, prompt, previous[side]);
        }
        previous[side] = prompt;
      }
      if (mark) {
        const memoriaTokens = await count(seen);
        // The load alone, three times on the same history (it stores nothing).
        const context = memoryContext(store, { sessionId: "agent" });
        const samples: number[] = [];
        for (let i = 0; i < 3; i++) samples.push(await timed(() => strategy.load(context)));
        const share = (side: "stepped" | "tightest") => (sent[side] === 0 ? Number.NaN : matched[side] / sent[side]);
        rows.push({
          turns: turn + 1,
          toolCalls: 4 * (turn + 1),
          langchainTokens,
          memoriaTokens,
          memoriaLoadMs: median(samples),
          cacheMatched: { stepped: share("stepped"), tightest: share("tightest") },
        });
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
