/**
 * A chat model that remembers: the flow of the course lesson in seed 002, in
 * TypeScript. A model wrapped with history and a session config; a second session
 * kept apart; clear(); preloading a session with addMessages, addUserMessage and
 * addAIMessage.
 *
 *   pnpm --filter @memoria/examples chat-with-history
 */
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { OfflineChatModel } from "./offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const store = createInMemoryStore();
  const llmWithHistory = new RunnableWithMessageHistory({ runnable: new OfflineChatModel({}), store });

  // The session to use goes in the call's config.
  const config = { configurable: { sessionId: "1" } };
  log(`> ${(await llmWithHistory.invoke("Hi! My name is Ivan. How are you?", config)).content}`);
  log(`> ${(await llmWithHistory.invoke("What is my name?", config)).content}`);

  // Another session knows nothing of the first.
  const other = { configurable: { sessionId: "2" } };
  log(`> ${(await llmWithHistory.invoke("What is my name?", other)).content}`);

  // The history of session 1, as LangChain's chat history object.
  const history = store.history({ sessionId: "1" });
  for (const message of await history.getMessages()) log(`  ${message.getType()}: ${message.content}`);

  // clear() forgets the session.
  await history.clear();
  log(`> ${(await llmWithHistory.invoke("What is my name?", config)).content}`);

  // Preload a session before the first call.
  const preloaded = store.history({ sessionId: "3" });
  await preloaded.addMessages([new HumanMessage("My name is Olga"), new AIMessage("Hello, Olga!")]);
  await preloaded.addUserMessage("I write Python.");
  await preloaded.addAIMessage("Good choice.");
  log(`> ${(await llmWithHistory.invoke("What is my name?", { configurable: { sessionId: "3" } })).content}`);

  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
