/**
 * A prompt template + model chain with memory (seed 002, second half): a system
 * message holding {topic}, MessagesPlaceholder("chat_history") where the history
 * goes, and the question as the human message. The wrapper is told which input
 * key holds the new message and which prompt slot takes the history.
 *
 *   pnpm --filter @memoria/examples prompt-with-history
 */
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory, createInMemoryStore } from "@memoria/core";
import { OfflineChatModel } from "./offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "You are an assistant who knows {topic}. Answer in one sentence."],
    new MessagesPlaceholder("chat_history"),
    ["human", "{question}"],
  ]);
  const chain = prompt.pipe(new OfflineChatModel({}));

  const store = createInMemoryStore();
  const withHistory = new RunnableWithMessageHistory({
    runnable: chain,
    store,
    inputMessagesKey: "question",
    historyMessagesKey: "chat_history",
  });

  const config = { configurable: { sessionId: "course" } };
  for (const question of ["My name is Ada. What is a list?", "And a tuple?", "What is my name?"]) {
    log(`? ${question}`);
    log(`> ${(await withHistory.invoke({ topic: "Python", question }, config)).content}`);
  }

  // Streaming works the same way: chunks as they come, the whole answer saved.
  let streamed = "";
  for await (const chunk of await withHistory.stream({ topic: "Python", question: "Thanks!" }, config)) {
    streamed += chunk.content;
  }
  log(`> ${streamed}`);
  log(`(session "course" holds ${await store.count({ sessionId: "course" })} messages)`);
  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
