/**
 * Semantic recall across conversations: each message is embedded after its turn
 * is saved, into sqlite-vec beside the history; a question in a new conversation
 * brings back the nearest earlier message with its neighbours, conversation and
 * date. Offline (hashing embeddings), on SQLite.
 *
 *   pnpm --filter @memoria/examples long-term:recall
 */
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { PromptPrinter, RunnableWithMessageHistory } from "@memoria/core";
import { combineMemory, windowMemory } from "@memoria/memory";
import { HashingEmbeddings, recallMemory } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { OfflineChatModel } from "../offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const store = createSqliteStore({ path: ":memory:" });
  const model = new OfflineChatModel({});
  // Any LangChain embeddings (OpenAIEmbeddings, …); the index is the store's own (sqlite-vec).
  const recall = recallMemory({ embeddings: new HashingEmbeddings(), scope: ["userId"], k: 1, range: { before: 0, after: 1 } });
  const memory = combineMemory(recall, windowMemory({ k: 2 }));
  const prompt = ChatPromptTemplate.fromMessages([["system", "You are a helpful assistant."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const chat = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    store,
    sessionFields: ["userId", "conversationId"],
    inputMessagesKey: "input",
    historyMessagesKey: "history",
    memory,
  });

  const earlier = ["The wifi password at the cabin is larch-42.", "We should repaint the fence in spring.", "The dentist moved my appointment to Tuesday."];
  for (const input of earlier) await chat.invoke({ input }, { configurable: { userId: "u1", conversationId: "october" } });
  await recall.idle();
  await chat.invoke(
    { input: "What was the cabin wifi password?" },
    { configurable: { userId: "u1", conversationId: "december" }, callbacks: [new PromptPrinter((text) => log(text.trim()))] },
  );
  await recall.idle();
  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
