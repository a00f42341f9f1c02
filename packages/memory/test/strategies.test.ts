import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import {
  type HistoryStore,
  type MemoryStrategy,
  type ReadOptions,
  RunnableWithMessageHistory,
  type SessionKey,
  createInMemoryStore,
  editSession,
  memoryContext,
} from "@memoria/core";
import { composedTurn } from "@memoria/core/store-kit";
import { numbered, transcript } from "@memoria/testkit";
import { describe, expect, it } from "vitest";
import {
  memoryBlock,
  bufferMemory,
  combineMemory,
  readOnlyMemory,
  summaryBufferMemory,
  summaryMemory,
  tiktokenCounter,
  tokenBufferMemory,
  windowMemory,
} from "../src/index.js";
import { HashingEmbeddings, recallMemory } from "../src/long-term.js";
import { STORES, recordingSummarizer } from "./helpers.js";

const count = tiktokenCounter();

/** A model that remembers what each turn's prompt held. */
function observer() {
  const prompts: BaseMessage[][] = [];
  const model = RunnableLambda.from((messages: BaseMessage[]) => {
    prompts.push(messages);
    return new AIMessage(`reply ${prompts.length} with some words to take up tokens in the history`);
  });
  return { model, prompts };
}

describe.each(STORES)("strategies on %s", (_, makeStore) => {
  it("bufferMemory gives the whole history", async () => {
    const store = makeStore();
    const key = { sessionId: "b" };
    await store.append(key, numbered(5));
    expect(await bufferMemory().load(memoryContext(store, key))).toHaveLength(5);
    await store.close();
  });

  it("tokenBufferMemory keeps whole recent turns within the budget, trimming in chunks so the prefix stays put", async () => {
    /** How often the first message of the prompt's history changed over 30 turns. */
    const prefixChanges = async (refillFraction: number) => {
      const store = makeStore();
      const { model, prompts } = observer();
      const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: tokenBufferMemory({ maxTokens: 120, refillFraction }) });
      for (let i = 0; i < 30; i++) await chain.invoke([new HumanMessage(`question ${i} about something`)], { configurable: { sessionId: "t" } });
      const histories = prompts.map((p) => p.slice(0, -1));
      for (const history of histories) {
        expect(await count(history)).toBeLessThanOrEqual(120);
        if (history.length) expect(history[0]!.getType()).toBe("human");
      }
      await store.close();
      const firsts = histories.map((h) => String(h[0]?.content ?? ""));
      return firsts.filter((first, i) => i > 0 && first !== firsts[i - 1]).length;
    };
    const oneTurnAtATime = await prefixChanges(1);
    const chunked = await prefixChanges(0.5);
    expect(oneTurnAtATime).toBeGreaterThan(20);
    expect(chunked).toBeLessThan(oneTurnAtATime / 2);
  });

  it("summaryMemory folds each turn into the summary, sending the model only the new lines", async () => {
    const store = makeStore();
    const { model: summarizer, calls } = recordingSummarizer();
    const { model, prompts } = observer();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: summaryMemory({ model: summarizer }) });
    const config = { configurable: { sessionId: "s" } };
    for (const text of ["Alpha one", "Bravo two", "Charlie three"]) await chain.invoke([new HumanMessage(text)], config);
    expect(calls).toEqual([
      ["Human: Alpha one", "AI: reply 1 with some words to take up tokens in the history"],
      ["Human: Bravo two", "AI: reply 2 with some words to take up tokens in the history"],
      ["Human: Charlie three", "AI: reply 3 with some words to take up tokens in the history"],
    ]);
    const last = prompts[2]!;
    expect(last[0]).toBeInstanceOf(SystemMessage);
    expect(last[0]!.content).toBe(memoryBlock("summary", "Summary of the conversation so far", "Alpha reply Bravo reply"));
    expect(last).toHaveLength(2);
    expect(await store.getState(config.configurable, "summary")).toEqual({ summary: "Alpha reply Bravo reply Charlie reply", folded: 6, trimmed: 0 });
    await store.close();
  });

  it("summaryMemory folds again from the stored messages after an edit changed what it had folded", async () => {
    const store = makeStore();
    const { model: summarizer, calls } = recordingSummarizer();
    const { model } = observer();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: summaryMemory({ model: summarizer }) });
    const config = { configurable: { sessionId: "edited" } };
    for (const text of ["Alpha one", "Bravo two"]) await chain.invoke([new HumanMessage(text)], config);
    expect((await store.getState(config.configurable, "summary")) as { summary: string }).toMatchObject({ summary: "Alpha reply Bravo reply", folded: 4 });
    const edit = await editSession(store, config.configurable, { op: "replace", at: 0, message: new HumanMessage("Delta one") });
    expect(edit.reset).toEqual(["summary"]);
    calls.length = 0;
    await chain.invoke([new HumanMessage("Echo three")], config);
    // The stored conversation is folded afresh before the turn (the replaced text is gone), then the turn after it.
    expect(calls).toEqual([
      [
        "Human: Delta one",
        "AI: reply 1 with some words to take up tokens in the history",
        "Human: Bravo two",
        "AI: reply 2 with some words to take up tokens in the history",
      ],
      ["Human: Echo three", "AI: reply 3 with some words to take up tokens in the history"],
    ]);
    expect(await store.getState(config.configurable, "summary")).toEqual({ summary: "Delta reply Bravo reply Echo reply", folded: 6, trimmed: 0 });
    await store.close();
  });

  it("summaryMemory repairs a fold that a crash skipped, on the next turn", async () => {
    const store = makeStore();
    const { model: summarizer, calls } = recordingSummarizer();
    const key = { sessionId: "crash" };
    // A turn saved, then the process died before the summary was updated.
    await store.append(key, [new HumanMessage("Delta four"), new AIMessage("Echo five")]);
    const loaded = await summaryMemory({ model: summarizer }).load(memoryContext(store, key));
    expect(calls).toEqual([["Human: Delta four", "AI: Echo five"]]);
    expect(loaded[0]!.content).toContain("Delta Echo");
    await store.close();
  });

  it("summaryBufferMemory bounds what is loaded over 50 turns and folds incrementally", async () => {
    const store = makeStore();
    const { model: summarizer, calls } = recordingSummarizer();
    const { model, prompts } = observer();
    const memory = summaryBufferMemory({ model: summarizer, maxTokens: 200, maxSummaryTokens: 60 });
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory });
    const config = { configurable: { sessionId: "sb" } };
    for (let i = 0; i < 50; i++) await chain.invoke([new HumanMessage(`Turn${i} tells a small fact about the weather`)], config);
    for (const prompt of prompts) {
      const history = prompt.slice(0, -1);
      const summary = history[0] instanceof SystemMessage ? [history[0]] : [];
      const buffer = history.slice(summary.length);
      expect(await count(buffer)).toBeLessThanOrEqual(200);
      expect(await count(summary)).toBeLessThanOrEqual(60 + 35); // the budget plus the memory block's tags and label
      if (buffer.length) expect(buffer[0]!.getType()).toBe("human");
    }
    // Every folded line went to the model exactly once, oldest first.
    const folded = calls.flat();
    expect(new Set(folded).size).toBe(folded.length);
    expect(folded[0]).toBe("Human: Turn0 tells a small fact about the weather");
    expect(calls.every((call) => call.length < 20)).toBe(true);
    const state = (await store.getState(config.configurable, "summary-buffer")) as { folded: number };
    expect(state.folded).toBe(folded.length);
    await store.close();
  });

  it("readOnlyMemory loads like the inner strategy but stores nothing", async () => {
    const store = makeStore();
    const key = { sessionId: "ro" };
    await store.append(key, numbered(6));
    const { model, prompts } = observer();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: readOnlyMemory(windowMemory({ k: 2 })) });
    await chain.invoke([new HumanMessage("peek")], { configurable: key });
    expect(transcript(prompts[0]!)).toEqual(["human: m4", "human: m5", "human: peek"]);
    expect(await store.count(key)).toBe(6);
    const { model: summarizer } = recordingSummarizer();
    await readOnlyMemory(summaryMemory({ model: summarizer })).load(memoryContext(store, key));
    expect(await store.getState(key, "summary")).toBeUndefined();
    await store.close();
  });
});

describe.each(STORES)("compaction on %s", (_, makeStore) => {
  it("summaryBufferMemory({ compact: true }) keeps only the unfolded messages in the store, and the prompt unchanged", async () => {
    const run = async (compact: boolean) => {
      const store = makeStore();
      const { model: summarizer } = recordingSummarizer();
      const { model, prompts } = observer();
      const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: summaryBufferMemory({ model: summarizer, maxTokens: 100, compact }) });
      for (let i = 0; i < 20; i++) await chain.invoke([new HumanMessage(`Turn${i} says something about the weather`)], { configurable: { sessionId: "c" } });
      const stored = await store.count({ sessionId: "c" });
      const state = await store.getState({ sessionId: "c" }, "summary-buffer");
      await store.close();
      return { stored, prompts: prompts.map((p) => transcript(p)), state };
    };
    const plain = await run(false);
    const compacted = await run(true);
    expect(plain.stored).toBe(40);
    expect(compacted.stored).toBeLessThan(12);
    expect(compacted.prompts).toEqual(plain.prompts);
    expect(compacted.state).toMatchObject({ folded: (plain.state as { folded: number }).folded });
  });

  it("summaryMemory({ compact: true }) leaves nothing but the summary", async () => {
    const store = makeStore();
    const { model: summarizer } = recordingSummarizer();
    const { model, prompts } = observer();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: summaryMemory({ model: summarizer, compact: true }) });
    for (const text of ["Alpha one", "Bravo two", "Charlie three"]) await chain.invoke([new HumanMessage(text)], { configurable: { sessionId: "sc" } });
    expect(await store.count({ sessionId: "sc" })).toBe(0);
    expect(prompts[2]![0]!.content).toBe(memoryBlock("summary", "Summary of the conversation so far", "Alpha reply Bravo reply"));
    await store.close();
  });
});

describe("combineMemory and the turn's read", () => {
  /**
   * An in-memory store counting the reads and counts it is asked for. Its turn reads
   * the session with the lock, as the Redis and PostgreSQL stores do in one step; with
   * `lockReads: false` its turn is made of its own calls (a read once the lock is
   * held, as SQLite's is), so that read is counted too.
   */
  function readingLockStore({ lockReads = true } = {}) {
    const inner = createInMemoryStore();
    const asked = { read: 0, count: 0 };
    const store: HistoryStore = Object.assign(Object.create(inner) as HistoryStore, {
      async read(key: SessionKey, options?: ReadOptions) {
        asked.read++;
        return inner.read(key, options);
      },
      async count(key: SessionKey) {
        asked.count++;
        return inner.count(key);
      },
    });
    if (!lockReads) store.openTurn = (key, options) => composedTurn(store, key, options);
    return { store, asked };
  }

  /** A strategy that only counts the session: as its turn loads, and after the turn saved. */
  function counting() {
    const seen: { load?: number; afterSave?: number } = {};
    const strategy: MemoryStrategy = {
      name: "counting",
      async load({ count }) {
        seen.load = await count();
        return [];
      },
      async afterSave({ count }) {
        seen.afterSave = await count();
      },
    };
    return { strategy, seen };
  }

  it("takes the history with the lock for its buffer, and counts the session from it until the turn writes", async () => {
    const { store, asked } = readingLockStore();
    await store.append({ sessionId: "c" }, numbered(4));
    const { strategy, seen } = counting();
    const memory = combineMemory(strategy, bufferMemory());
    expect(memory.firstRead).toEqual({});
    const { model, prompts } = observer();
    await new RunnableWithMessageHistory({ runnable: model, store, memory }).invoke([new HumanMessage("q")], { configurable: { sessionId: "c" } });
    expect(prompts[0]).toHaveLength(5);
    expect(seen.load).toBe(4);
    // After the turn's write, the same turn's count is asked of the store again.
    expect(seen.afterSave).toBe(6);
    expect(asked).toEqual({ read: 0, count: 1 });
  });

  /** A strategy that reads the session as `options` says, keeps what it got, and adds nothing to the prompt. */
  function reading(options?: ReadOptions) {
    const got: BaseMessage[][] = [];
    const strategy: MemoryStrategy = {
      name: "reading",
      async load({ read }) {
        got.push(await read(options));
        return [];
      },
    };
    return { strategy, got };
  }

  it("reads the whole history once for all its parts: copies of one array, a tail of it for a window", async () => {
    const { store, asked } = readingLockStore();
    await store.append({ sessionId: "s" }, numbered(6));
    const whole = reading();
    const again = reading();
    const tail = reading({ last: 2 });
    const memory = combineMemory(whole.strategy, tail.strategy, again.strategy, bufferMemory());
    const { model, prompts } = observer();
    await new RunnableWithMessageHistory({ runnable: model, store, memory }).invoke([new HumanMessage("q")], { configurable: { sessionId: "s" } });
    expect(asked.read).toBe(0); // the lock's read served them all
    expect(whole.got[0]).toHaveLength(6);
    expect(tail.got[0]).toEqual((whole.got[0] as BaseMessage[]).slice(4));
    expect(prompts[0]).toEqual([...(whole.got[0] as BaseMessage[]), new HumanMessage("q")]);
    (whole.got[0] as BaseMessage[]).length = 0; // a part's array is its own
    expect(again.got[0]).toHaveLength(6);
  });

  it("reads from the store again after a part trimmed the session, and leaves odd windows to the store", async () => {
    const { store, asked } = readingLockStore();
    const key = { sessionId: "t" };
    await store.append(key, numbered(6));
    const trimming: MemoryStrategy = {
      name: "trimming",
      async load({ read, trim }) {
        await read();
        await trim?.(2);
        return [];
      },
    };
    const after = reading();
    await combineMemory(trimming, after.strategy).load(memoryContext(store, key));
    expect(after.got[0]).toHaveLength(4);
    expect(asked.read).toBe(2);
    await expect(combineMemory(reading().strategy, reading({ last: -1 }).strategy).load(memoryContext(store, key))).rejects.toThrow(/last/);
  });

  /**
   * One conversation through recall (alone, or with a buffer): a line, six lines of
   * small talk, then a question about the line. What the store was asked during the
   * question's turn, and that turn's prompt.
   */
  async function questionAboutAnEarlierLine(options: { lockReads: boolean; buffer: boolean }) {
    const { store, asked } = readingLockStore(options);
    const recall = recallMemory({ embeddings: new HashingEmbeddings(), k: 1, range: { before: 0, after: 0 } });
    const { model, prompts } = observer();
    const chain = new RunnableWithMessageHistory({ runnable: model, store, memory: options.buffer ? combineMemory(recall, bufferMemory()) : recall });
    const say = (text: string) => chain.invoke([new HumanMessage(text)], { configurable: { sessionId: "here" } });
    await say("The lighthouse tour is on Sunday.");
    for (let i = 0; i < 6; i++) await say(`Small talk line ${i}.`);
    await recall.idle();
    asked.read = 0;
    asked.count = 0;
    await say("When is the lighthouse tour?");
    const during = { ...asked };
    await recall.idle();
    expect(prompts[7]?.[0]?.content).toContain("Human: The lighthouse tour is on Sunday.");
    return { asked: during, prompt: prompts[7] };
  }

  it("shows recall's passage of this very conversation from the turn's own read, the buffer's too", async () => {
    const { asked, prompt } = await questionAboutAnEarlierLine({ lockReads: true, buffer: true });
    expect(prompt).toHaveLength(16); // the memory block, 14 messages, the question
    expect(asked).toEqual({ read: 0, count: 0 }); // recall's passage, the count behind skipRecent and the buffer: the lock's one read
  });

  it("counts from the turn's one whole read where the lock reads nothing (SQLite's): recall's skipRecent asks no count", async () => {
    // One whole read: the passage, the count behind skipRecent, the buffer.
    expect((await questionAboutAnEarlierLine({ lockReads: false, buffer: true })).asked).toEqual({ read: 1, count: 0 });
    // Recall alone reads its conversation once too: the passage and the count from one read.
    const alone = await questionAboutAnEarlierLine({ lockReads: false, buffer: false });
    expect(alone.prompt).toHaveLength(2); // the memory block, the question
    expect(alone.asked).toEqual({ read: 1, count: 0 });
  });

  it("takes a window with the lock when that is the first read, and counts from the store then", async () => {
    const { store, asked } = readingLockStore();
    await store.append({ sessionId: "w" }, numbered(10));
    const { strategy, seen } = counting();
    const window = windowMemory({ k: 2 });
    const memory = combineMemory(strategy, window);
    expect(memory.firstRead).toEqual(window.firstRead);
    const windowed = await window.load(memoryContext(store, { sessionId: "w" }));
    asked.read = 0;
    const { model, prompts } = observer();
    await new RunnableWithMessageHistory({ runnable: model, store, memory }).invoke([new HumanMessage("q")], { configurable: { sessionId: "w" } });
    expect(prompts[0]).toEqual([...windowed, new HumanMessage("q")]);
    expect(seen).toEqual({ load: 10, afterSave: 12 });
    expect(asked).toEqual({ read: 0, count: 2 });
  });
});
