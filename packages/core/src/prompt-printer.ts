import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { type BaseMessage, getBufferString } from "@langchain/core/messages";

/**
 * Prints each prompt after formatting, as LangChain Python's `verbose=True` shows
 * it (LangChain.js's `verbose` prints a JSON run log instead): a text prompt as it
 * is, a chat prompt as `System: … / Human: … / AI: …` lines. Pass it as a callback:
 * `chain.invoke(input, { callbacks: [new PromptPrinter()] })`.
 */
export class PromptPrinter extends BaseCallbackHandler {
  name = "prompt-printer";
  /** @param write where the text goes. @default standard output */
  constructor(private readonly write: (text: string) => void = (text) => void process.stdout.write(text)) {
    super();
  }
  override handleLLMStart(_llm: unknown, prompts: string[]) {
    for (const prompt of prompts) this.write(`\nPrompt after formatting:\n${prompt}\n\n`);
  }
  override handleChatModelStart(_llm: unknown, prompts: BaseMessage[][]) {
    const [messages = []] = prompts;
    // A text prompt sent to a chat model arrives as one human message: show its text as it is.
    const only = messages.length === 1 && messages[0]?.getType() === "human" ? String(messages[0].content) : getBufferString(messages);
    this.write(`\nPrompt after formatting:\n${only}\n\n`);
  }
}
