/**
 * W12: what a provider with prefix caching bills at full price over a long
 * conversation. Each strategy drives the same conversation through its wrapper
 * (LangChain's `RunnableWithMessageHistory` with `trimMessages` or a window of the
 * last k turns, memoria's with its strategies); the model records the prompt it is
 * given. A turn's prompt is billed at full price past the prefix it shares with the
 * previous turn's prompt, cached as OpenAI caches: nothing below 1,024 tokens, then
 * in steps of 128.
 */
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { type BaseMessage, HumanMessage, SystemMessage, trimMessages } from "@langchain/core/messages";
import { RunnableWithMessageHistory as LangChainWrapper, RunnableLambda } from "@langchain/core/runnables";
import { type MemoryStrategy, RunnableWithMessageHistory, createInMemoryStore, wholeHistory } from "@memoria/core";
import { type TokenCounter, tiktokenCounter, tokenBufferMemory, windowMemory } from "@memoria/memory";

export interface PromptCacheRow {
  strategy: string;
  /** The LangChain row this one is measured against (its own name when it is one). */
  versus?: string;
  /** Tokens of history in the prompt over the last half of the conversation: the least and the most. */
  history: { least: number; most: number };
  /** Every prompt's tokens, summed over the conversation. */
  sent: number;
  /** Of those, the tokens past each prompt's cached prefix. */
  fullPrice: number;
}

/** What OpenAI's prompt cache matches of a prompt sharing `shared` leading tokens with the last one. */
export const cachedTokens = (shared: number): number => (shared < 1_024 ? 0 : 1_024 + Math.floor((shared - 1_024) / 128) * 128);

const SYSTEM = new SystemMessage(
  `You are a patient travel planner. ${"Answer with concrete places, times and prices, say what you are unsure of, and keep to what the traveller asked. ".repeat(6)}`,
);
const WORDS = "train ferry museum market harbour castle garden bridge station tower village coast river lake valley street square hotel café bakery".split(" ");

/** Turn `turn`'s question and answer: made up, the same for every strategy, about 40 and 200 tokens. */
function exchange(turn: number): [string, string] {
  const word = (i: number) => WORDS[(turn * 7 + i * 3) % WORDS.length];
  const question = `Turn ${turn}: what about the ${word(0)} near the ${word(1)}? ${"Tell me what to see there and how long it takes. ".repeat(3)}`;
  const answer = Array.from({ length: 12 }, (_, i) => `The ${word(i)} is ${10 + ((turn + i) % 40)} minutes from the ${word(i + 1)}.`).join(" ");
  return [question, answer];
}

/**
 * cl100k_base tokens of messages, each message counted once and summed: the same
 * counter for the cache's arithmetic, LangChain's `trimMessages` and memoria's
 * token budgets (200 turns of whole history counted afresh each turn took minutes).
 */
function memoCounter(): TokenCounter {
  const count = tiktokenCounter();
  const counted = new Map<string, number>();
  return (messages) => {
    let sum = 0;
    for (const message of messages) {
      const text = JSON.stringify(message);
      let tokens = counted.get(text);
      if (tokens === undefined) {
        tokens = count([message]) as number;
        counted.set(text, tokens);
      }
      sum += tokens;
    }
    return sum;
  };
}

/** Drives `turns` turns through `send` (which returns the prompt the model saw) and totals what a cache would bill. */
async function drive(strategy: string, turns: number, send: (question: string, answer: string) => Promise<BaseMessage[]>): Promise<PromptCacheRow> {
  const tokensOf = memoCounter() as (messages: readonly BaseMessage[]) => number;
  const row: PromptCacheRow = { strategy, history: { least: Number.POSITIVE_INFINITY, most: 0 }, sent: 0, fullPrice: 0 };
  let previous: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const prompt = await send(...exchange(turn));
    const texts = prompt.map((message) => JSON.stringify(message));
    let same = 0;
    while (same < Math.min(texts.length, previous.length) && texts[same] === previous[same]) same++;
    const tokens = tokensOf(prompt);
    row.sent += tokens;
    row.fullPrice += tokens - cachedTokens(tokensOf(prompt.slice(0, same)));
    if (turn >= turns / 2) {
      const history = tokensOf(prompt.slice(1, -1));
      row.history.least = Math.min(row.history.least, history);
      row.history.most = Math.max(row.history.most, history);
    }
    previous = texts;
  }
  return row;
}

/** A model that answers turn by turn with the conversation's next answer and keeps the prompt it was given. */
function recordingModel() {
  const seen = { prompt: [] as BaseMessage[], answer: "" };
  const model = RunnableLambda.from((prompt: BaseMessage[]) => {
    seen.prompt = prompt;
    return seen.answer;
  });
  return { seen, model };
}

/** A turn sent through `chain`: the prompt its recording model was given. */
function turnsThrough(chain: { invoke(input: { input: string }, config: object): Promise<unknown> }, seen: { prompt: BaseMessage[]; answer: string }) {
  return async (question: string, answer: string) => {
    seen.answer = answer;
    await chain.invoke({ input: question }, { configurable: { sessionId: "s" } });
    return seen.prompt;
  };
}

function viaLangChain(shape: (history: BaseMessage[]) => Promise<BaseMessage[]>) {
  const { seen, model } = recordingModel();
  const history = new InMemoryChatMessageHistory();
  const chain = new LangChainWrapper({
    runnable: RunnableLambda.from(async ({ input, history = [] }: { input: string; history?: BaseMessage[] }) => [
      SYSTEM,
      ...(await shape(history)),
      new HumanMessage(input),
    ]).pipe(model),
    getMessageHistory: () => history,
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });
  return turnsThrough(chain, seen);
}

function viaMemoria(memory: MemoryStrategy) {
  const { seen, model } = recordingModel();
  const chain = new RunnableWithMessageHistory({
    runnable: RunnableLambda.from(({ input, history = [] }: { input: string; history?: BaseMessage[] }) => [SYSTEM, ...history, new HumanMessage(input)]).pipe(
      model,
    ),
    store: createInMemoryStore(),
    memory,
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });
  return turnsThrough(chain, seen);
}

/**
 * The rows: LangChain's sliding windows (by tokens, `trimMessages`; by turns, the
 * last k) against memoria's windows that move in blocks, sized so that each holds
 * at least what the sliding window it stands beside holds; the whole history last.
 */
export async function promptCacheRows(turns: number, budget: number, k: number): Promise<PromptCacheRow[]> {
  const count = memoCounter();
  const trimmer = trimMessages({ maxTokens: budget, strategy: "last", startOn: "human", tokenCounter: async (messages) => count(messages) });
  const tokens = await drive(
    `LangChain trimMessages (${budget.toLocaleString("en")} tokens, sliding)`,
    turns,
    viaLangChain((history) => trimmer.invoke(history)),
  );
  const window = await drive(
    `LangChain window of the last ${k} turns (sliding)`,
    turns,
    viaLangChain(async (history) => history.slice(-2 * k)),
  );
  const against = (row: PromptCacheRow, versus: PromptCacheRow) => ({ ...row, versus: versus.strategy });
  return [
    tokens,
    against(
      await drive(
        `memoria tokenBufferMemory (${budget.toLocaleString("en")}, refillFraction 1: sliding)`,
        turns,
        viaMemoria(tokenBufferMemory({ maxTokens: budget, refillFraction: 1, tokenCounter: count })),
      ),
      tokens,
    ),
    against(
      await drive(
        `memoria tokenBufferMemory (${Math.round(budget / 0.7).toLocaleString("en")}, default refillFraction 0.7)`,
        turns,
        viaMemoria(tokenBufferMemory({ maxTokens: Math.round(budget / 0.7), tokenCounter: count })),
      ),
      tokens,
    ),
    window,
    against(await drive(`memoria windowMemory (k ${k})`, turns, viaMemoria(windowMemory({ k }))), window),
    against(await drive(`memoria windowMemory (k ${k}, step ${k})`, turns, viaMemoria(windowMemory({ k, step: k }))), window),
    against(await drive("memoria wholeHistory (the default)", turns, viaMemoria(wholeHistory())), tokens),
  ];
}
