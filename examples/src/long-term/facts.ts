/**
 * Facts with time: after "Ada lives in London" and, in a later conversation,
 * "Ada moved to Paris", the prompt says Paris, and the facts keep London until
 * the move. Offline, on SQLite.
 *
 *   pnpm --filter @memoria/examples long-term:facts
 */
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { PromptPrinter, RunnableWithMessageHistory } from "@memoria/core";
import { combineMemory, windowMemory } from "@memoria/memory";
import { factMemory } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { OfflineChatModel } from "../offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const store = createSqliteStore({ path: ":memory:" });
  const model = new OfflineChatModel({}); // or ChatOpenAI: it extracts through withStructuredOutput
  const facts = factMemory({ model, scope: ["userId"] }); // one set of facts per user, across conversations
  const memory = combineMemory(facts, windowMemory({ k: 2 }));
  const prompt = ChatPromptTemplate.fromMessages([["system", "You are a helpful assistant."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const chat = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    store,
    sessionFields: ["userId", "conversationId"],
    inputMessagesKey: "input",
    historyMessagesKey: "history",
    memory,
  });

  await chat.invoke({ input: "Ada lives in London." }, { configurable: { userId: "u1", conversationId: "march" } });
  await facts.idle(); // extraction runs after the turn is saved; wait only to show it
  await chat.invoke({ input: "Ada moved to Paris." }, { configurable: { userId: "u1", conversationId: "june" } });
  await facts.idle();

  for (const fact of await facts.facts(store, { userId: "u1" })) {
    log(`${fact.statement}: since ${fact.since.slice(0, 10)}${fact.until ? `, until ${fact.until.slice(0, 10)} (replaced by ${fact.replacedBy})` : ""}`);
  }
  await chat.invoke(
    { input: "Where does Ada live?" },
    { configurable: { userId: "u1", conversationId: "july" }, callbacks: [new PromptPrinter((text) => log(text.trim()))] },
  );
  await facts.idle();
  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
