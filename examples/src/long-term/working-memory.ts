/**
 * Working memory: a profile of the user that the model rewrites after each turn
 * and that starts every later conversation. Offline, on SQLite.
 *
 *   pnpm --filter @memoria/examples long-term:working-memory
 */
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { PromptPrinter, RunnableWithMessageHistory } from "@memoria/core";
import { combineMemory, windowMemory } from "@memoria/memory";
import { workingMemory } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { OfflineChatModel } from "../offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const store = createSqliteStore({ path: ":memory:" });
  const model = new OfflineChatModel({});
  const profile = workingMemory({ model, scope: ["userId"] }); // or give `schema` for a JSON profile
  const memory = combineMemory(profile, windowMemory({ k: 2 }));
  const prompt = ChatPromptTemplate.fromMessages([["system", "You are a helpful assistant."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const chat = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    store,
    sessionFields: ["userId", "conversationId"],
    inputMessagesKey: "input",
    historyMessagesKey: "history",
    memory,
  });

  await chat.invoke({ input: "My name is Ada and Ada works at Babbage Labs." }, { configurable: { userId: "u1", conversationId: "first" } });
  await chat.invoke({ input: "My favourite language is Haskell." }, { configurable: { userId: "u1", conversationId: "first" } });
  await profile.idle();
  log(`profile:\n${await profile.profile(store, { userId: "u1" })}`);
  await chat.invoke(
    { input: "What is my name?" },
    { configurable: { userId: "u1", conversationId: "second" }, callbacks: [new PromptPrinter((text) => log(text.trim()))] },
  );
  await profile.idle();
  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
