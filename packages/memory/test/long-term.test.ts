import { HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, RunnableWithMessageHistory, SCOPE_FIELD } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { combineMemory, memoryBlock, windowMemory } from "../src/index.js";
import { factMemory, workingMemory } from "../src/long-term.js";
import { STORES, memoryModel, recordingChat } from "./helpers.js";

function chatWith(store: HistoryStore, memory: ReturnType<typeof combineMemory>, chat = recordingChat()) {
  const chain = new RunnableWithMessageHistory({ runnable: chat.model, store, sessionFields: ["userId", "conversationId"], memory });
  const say = (userId: string, conversationId: string, text: string) => chain.invoke([new HumanMessage(text)], { configurable: { userId, conversationId } });
  /** Lets background work end before the store closes (work left pending would report STORE_CLOSED, and resume on the next start). */
  const close = async () => {
    await memory.idle();
    await store.close();
  };
  return { say, chat, close };
}

describe.each(STORES)("factMemory on %s", (_, makeStore) => {
  it("closes a fact that a later conversation contradicts: London until the move, Paris since", async () => {
    const store = makeStore();
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"] });
    const { say, chat, close } = chatWith(store, combineMemory(facts, windowMemory({ k: 2 })));
    await say("ada", "c1", "Ada lives in London.");
    await facts.idle();
    await say("ada", "c2", "Big news: Ada moved to Paris.");
    await facts.idle();
    await say("ada", "c3", "Where does Ada live?");

    const all = await facts.facts(store, { userId: "ada" });
    expect(all.map((fact) => [fact.statement, fact.until === undefined])).toEqual([
      ["Ada lives in London", false],
      ["Ada lives in Paris", true],
    ]);
    const [london, paris] = all;
    expect(london?.replacedBy).toBe(paris?.id);
    expect(london?.until).toBe(paris?.since);
    expect(paris?.source).toEqual({ session: "conversationId=c2&userId=ada", message: 0 });
    const system = chat.lastSystem() ?? "";
    expect(system).toMatch(/- Ada lives in Paris \(since \d{4}-\d\d-\d\d\)/);
    expect(system).toMatch(/No longer true:\n- Ada lives in London \(until \d{4}-\d\d-\d\d\)/);
    expect(await facts.facts(store, { userId: "bob" })).toEqual([]);
    await close();
  });

  it("extracts off the turn: the call resolves while extraction waits, and idle() waits for it", async () => {
    const store = makeStore();
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"] });
    const { say, close } = chatWith(store, combineMemory(facts, windowMemory({ k: 2 })));
    const open = extractor.hold();
    await say("ada", "c1", "Ada works at Babbage Labs.");
    expect(await facts.facts(store, { userId: "ada" })).toEqual([]);
    let idle = false;
    const waiting = facts.idle().then(() => {
      idle = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(idle).toBe(false);
    open();
    await waiting;
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement)).toEqual(["Ada works at Babbage Labs"]);
    await close();
  });

  it("hands a failed extraction to onError and retries it with the next turn, processing each message once", async () => {
    const store = makeStore();
    const extractor = memoryModel();
    const errors: unknown[] = [];
    const facts = factMemory({ model: extractor.model, scope: ["userId"], onError: (error) => errors.push(error) });
    const { say, close } = chatWith(store, combineMemory(facts, windowMemory({ k: 2 })));
    extractor.failNext(1);
    await say("ada", "c1", "Ada lives in Rome.");
    await facts.idle();
    expect(errors).toHaveLength(1);
    expect(await facts.facts(store, { userId: "ada" })).toEqual([]);
    await say("ada", "c1", "Ada works at Olivetti.");
    await facts.idle();
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement)).toEqual(["Ada lives in Rome", "Ada works at Olivetti"]);
    const processed = extractor.extractions().slice(1).join("\n");
    expect(processed.match(/Ada lives in Rome/g)).toHaveLength(1); // the retry, and nothing since
    await close();
  });

  it("works through a backlog a batch at a time, each batch's facts and mark stored before the next", async () => {
    const store = makeStore();
    const plain = new RunnableWithMessageHistory({
      runnable: recordingChat().model,
      store,
      sessionFields: ["userId", "conversationId"],
      memory: windowMemory({ k: 1 }),
    });
    for (const text of ["Ada lives in Oslo.", "Bob lives in Rome.", "Cid lives in Bonn."])
      await plain.invoke([new HumanMessage(text)], { configurable: { userId: "ada", conversationId: "c1" } });
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"], batchSize: 2 });
    await facts.resume(store, { userId: "ada" });
    expect(extractor.extractions()).toHaveLength(3); // 6 messages, 2 at a time
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.source)).toEqual([
      { session: "conversationId=c1&userId=ada", message: 0 },
      { session: "conversationId=c1&userId=ada", message: 2 },
      { session: "conversationId=c1&userId=ada", message: 4 },
    ]);
    await store.close();
  });

  it("a throwing onError hook does not turn a failed extraction into an unhandled rejection", async () => {
    const store = makeStore();
    const extractor = memoryModel();
    const facts = factMemory({
      model: extractor.model,
      scope: ["userId"],
      onError: () => {
        throw new Error("the hook itself fails");
      },
    });
    const { say, close } = chatWith(store, combineMemory(facts, windowMemory({ k: 2 })));
    extractor.failNext(1);
    await say("ada", "c1", "Ada lives in Kyiv.");
    await facts.idle();
    await say("ada", "c1", "Ada works at Arsenal.");
    await facts.idle();
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement)).toEqual(["Ada lives in Kyiv", "Ada works at Arsenal"]);
    await close();
  });

  it("picks the facts a pronoun refers to through the model when there are more than maxFacts", async () => {
    const store = makeStore();
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"], maxFacts: 1 });
    const { say, chat, close } = chatWith(store, combineMemory(facts, windowMemory({ k: 2 })));
    await say("u1", "c1", "Bob lives in Oslo. Ada lives in Lisbon.");
    await facts.idle();
    await say("u1", "c2", "I had lunch with Ada today.");
    await say("u1", "c2", "Where does she live?");
    const system = chat.lastSystem() ?? "";
    expect(system).toContain("Ada lives in Lisbon");
    expect(system).not.toContain("Oslo");
    expect(extractor.prompts.some((prompt) => prompt.startsWith("Which of the known subjects") && prompt.includes("New message: Where does she live?"))).toBe(
      true,
    );
    await close();
  });

  it("keeps facts per scope and refuses a session key without the scope's field", async () => {
    const store = makeStore();
    const facts = factMemory({ model: memoryModel().model, scope: ["userId"] });
    const chain = new RunnableWithMessageHistory({ runnable: recordingChat().model, store, memory: facts });
    await expect(chain.invoke([new HumanMessage("hi")], { configurable: { sessionId: "s" } })).rejects.toMatchObject({
      code: "INVALID_SESSION_KEY",
      field: "userId",
    });
    expect(await store.count({ sessionId: "s" })).toBe(0);
    expect(() => factMemory({ model: memoryModel().model, scope: [SCOPE_FIELD] })).toThrow(/reserved/);
    await store.close();
  });
});

describe.each(STORES)("workingMemory on %s", (_, makeStore) => {
  it("keeps one profile per user, updated after each turn and given to the next conversation", async () => {
    const store = makeStore();
    const profiler = memoryModel();
    const profile = workingMemory({ model: profiler.model, scope: ["userId"] });
    const { say, chat, close } = chatWith(store, combineMemory(profile, windowMemory({ k: 2 })));
    await say("ada", "c1", "My name is Ada and Ada lives in London.");
    await profile.idle();
    await say("ada", "c2", "Ada moved to Paris.");
    await profile.idle();
    expect(await profile.profile(store, { userId: "ada" })).toBe("Ada lives in Paris\nthe user is named Ada");
    await say("ada", "c3", "What do you know about me?");
    expect(chat.lastSystem()).toBe(memoryBlock("profile", "What you know about the user (working memory)", "Ada lives in Paris\nthe user is named Ada"));
    expect(await profile.profile(store, { userId: "bob" })).toBeUndefined();
    await close();
  });

  it("keeps a JSON profile when given a schema, and drops it after its retention", async () => {
    const store = makeStore();
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const model = RunnableLambda.from((prompt: string) => (prompt.includes('"city"') && prompt.includes("Paris") ? '{"city": "Paris"}' : "{}"));
    const profile = workingMemory({ model, scope: ["userId"], schema, retentionMs: 60_000 });
    const { say, close } = chatWith(store, combineMemory(profile, windowMemory({ k: 1 })));
    await say("ada", "c1", "I live in Paris now.");
    await profile.idle();
    expect(await profile.profile(store, { userId: "ada" })).toEqual({ city: "Paris" });
    const stale = workingMemory({ model, scope: ["userId"], schema, retentionMs: -1 });
    expect(await stale.profile(store, { userId: "ada" })).toBeUndefined();
    await close();
  });
});

describe("retention", () => {
  it("drops facts and recall vectors older than their kind's retention, at the next pass", async () => {
    const { createSqliteStore } = await import("@memoria/sql");
    const { HashingEmbeddings, recallMemory } = await import("../src/long-term.js");
    const store = createSqliteStore({ path: ":memory:" });
    const facts = factMemory({ model: memoryModel().model, scope: ["userId"], retentionMs: 50 });
    const recall = recallMemory({ embeddings: new HashingEmbeddings(), scope: ["userId"], retentionMs: 50 });
    const { say, close } = chatWith(store, combineMemory(facts, recall, windowMemory({ k: 1 })));
    await say("ada", "c1", "Ada lives in Riga.");
    await facts.idle();
    await recall.idle();
    const scope = "memoriaScope=userId&userId=ada";
    expect(await recall.indexFor(store).search(scope, new HashingEmbeddings().vector("Riga"), 10)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await say("ada", "c2", "Ada works at Hansa Port.");
    await facts.idle();
    await recall.idle();
    expect((await facts.facts(store, { userId: "ada" })).map((fact) => fact.statement)).toEqual(["Ada works at Hansa Port"]);
    const left = await recall.indexFor(store).search(scope, new HashingEmbeddings().vector("Riga"), 10);
    expect(left.map((hit) => hit.session)).toEqual(["conversationId=c2&userId=ada", "conversationId=c2&userId=ada"]);
    await close();
  });
});

describe("classic memories with facts", () => {
  it("EntityMemory and ConversationKGMemory with `facts` give what holds now, across conversations", async () => {
    const { EntityMemory, ConversationKGMemory } = await import("../src/classic.js");
    const { createSqliteStore } = await import("@memoria/sql");
    const store = createSqliteStore({ path: ":memory:" });
    const extractor = memoryModel();
    const facts = factMemory({ model: extractor.model, scope: ["userId"] });
    const first = new EntityMemory({ llm: extractor.model, chatHistory: store.history({ userId: "ada", conversationId: "c1" }), facts, k: 1 });
    await first.saveContext({ input: "Ada lives in London." }, { output: "noted" });
    await facts.idle();
    const second = new EntityMemory({ llm: extractor.model, chatHistory: store.history({ userId: "ada", conversationId: "c2" }), facts, k: 1 });
    await second.saveContext({ input: "Ada moved to Paris." }, { output: "noted" });
    await facts.idle();
    const vars = await second.loadMemoryVariables({ input: "Where does Ada live?" });
    expect(vars.entities).toEqual({ Ada: expect.stringMatching(/^Ada lives in Paris \(since \d{4}-\d\d-\d\d\)\.$/) });
    expect(vars.history).toBe("Human: Ada moved to Paris.\nAI: noted");
    const graph = new ConversationKGMemory({ llm: extractor.model, chatHistory: store.history({ userId: "ada", conversationId: "c3" }), facts });
    expect((await graph.loadMemoryVariables({ input: "Where does Ada live?" })).history).toMatch(/^Ada lives in Paris \(since [\d-]+\)\.$/);
    await store.close();
  });
});
