/**
 * Long-term memory across a user's conversations, offline, on SQLite:
 * facts with time (factMemory), a profile (workingMemory) and semantic recall
 * (recallMemory, through sqlite-vec), each worked out after the turn is saved.
 *
 *   pnpm --filter @memoria/examples long-term-memory
 */
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { PromptPrinter, RunnableWithMessageHistory } from "@memoria/core";
import { combineMemory, windowMemory } from "@memoria/memory";
import { HashingEmbeddings, factMemory, recallMemory, workingMemory } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { OfflineChatModel } from "./offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const store = createSqliteStore({ path: ":memory:" });
  const model = new OfflineChatModel({});
  // Each kind keeps one record per user (scope: ["userId"]), across conversations.
  const facts = factMemory({ model, scope: ["userId"] });
  const profile = workingMemory({ model, scope: ["userId"] });
  const recall = recallMemory({ embeddings: new HashingEmbeddings(), scope: ["userId"], k: 1 });
  const memory = combineMemory(profile, facts, recall, windowMemory({ k: 2 }));

  const prompt = ChatPromptTemplate.fromMessages([["system", "You are a helpful assistant."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const chat = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    store,
    sessionFields: ["userId", "conversationId"],
    inputMessagesKey: "input",
    historyMessagesKey: "history",
    memory,
  });
  const say = async (conversationId: string, input: string) => {
    await chat.invoke({ input }, { configurable: { userId: "ada", conversationId } });
    await memory.idle(); // the work is off the turn; wait for it only to show its result
  };

  await say("monday", "My name is Ada and Ada lives in London.");
  await say("monday", "My favourite book is Dune.");
  await say("friday", "Ada moved to Paris.");

  log("facts, with the time each held:");
  for (const fact of await facts.facts(store, { userId: "ada" })) {
    log(`  ${fact.statement} (since ${fact.since.slice(0, 10)}${fact.until ? `, until ${fact.until.slice(0, 10)}` : ""})`);
  }
  log(`profile:\n  ${String(await profile.profile(store, { userId: "ada" })).replace(/\n/g, "\n  ")}`);

  // A new conversation: the prompt the model gets holds the profile, the facts that
  // hold now (and the one replaced), and the earlier message the question recalls.
  log("prompt of a new conversation:");
  await chat.invoke(
    { input: "Which book do I like?" },
    { configurable: { userId: "ada", conversationId: "sunday" }, callbacks: [new PromptPrinter((text) => log(text.trim()))] },
  );
  await memory.idle();

  await store.delete({ userId: "ada" }); // erases her conversations, facts, profile and vectors
  log(`after delete({ userId: "ada" }): ${(await facts.facts(store, { userId: "ada" })).length} facts`);
  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
