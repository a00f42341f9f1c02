/**
 * Seeds 000/001 in TypeScript: an LLMChain with memory, first with a text prompt
 * where the history is rendered as "Human: … / AI: …" lines, then with a chat
 * prompt where it arrives as messages (returnMessages: true). Each prompt is
 * printed after formatting, as the seed's `verbose=True` shows it (LangChain.js's
 * own `verbose: true` prints it too, inside its JSON run log).
 *
 *   pnpm --filter @memoria/examples llm-chain-memory
 */
import { SystemMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, HumanMessagePromptTemplate, MessagesPlaceholder, PromptTemplate } from "@langchain/core/prompts";
import { LLMChain } from "@langchain/classic/chains";
import { PromptPrinter } from "@memoria/core";
import { BufferMemory } from "@memoria/memory/classic";
import { OfflineChatModel } from "./offline-model.js";

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const config = { callbacks: [new PromptPrinter((text) => log(text.trimEnd()))] };
  const template = `You are a chatbot having a conversation with a human.

{chat_history}
Human: {human_input}
Chatbot:`;
  const textChain = new LLMChain({
    llm: new OfflineChatModel({}),
    prompt: new PromptTemplate({ inputVariables: ["chat_history", "human_input"], template }),
    memory: new BufferMemory({ memoryKey: "chat_history" }),
  });
  for (const human_input of ["Hi there my friend, my name is Ada", "Not too bad - how are you?"]) {
    log(`> ${(await textChain.invoke({ human_input }, config)).text}`);
  }

  const chatPrompt = ChatPromptTemplate.fromMessages([
    new SystemMessage("You are a chatbot having a conversation with a human."),
    new MessagesPlaceholder("chat_history"),
    HumanMessagePromptTemplate.fromTemplate("{human_input}"),
  ]);
  const chatChain = new LLMChain({
    llm: new OfflineChatModel({}),
    prompt: chatPrompt,
    memory: new BufferMemory({ memoryKey: "chat_history", returnMessages: true }),
  });
  for (const human_input of ["Hi there my friend, my name is Ada", "What is my name?"]) {
    log(`> ${(await chatChain.invoke({ human_input }, config)).text}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
