import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { answerMemoryPrompt } from "@memoria/testkit/scripted-model";
import { bestRemembered, rememberedLines } from "./memory-reader.js";

function text(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : message.text;
}

/** A question about the person's name: "What is my name?", "Who am I?", "Do you remember my name?". */
const ASKS_NAME = /what(?:'s| is) my name|\bwho am i\b|\bdo you (?:know|remember) my name/i;

/**
 * The name a text tells, if any: "my name is ada", or an introduction whose name is
 * capitalised ("Hi, I'm Grace", "call me Lin"), so "I'm tired" names nobody.
 */
function nameIn(said: string): string | undefined {
  return (
    /(?:my name is|the user is named) ([\p{L}\p{N}_-]+)/iu.exec(said)?.[1] ??
    /(?:^|[^\p{L}])(?:[Ii]'m|[Ii] am|[Cc]all me|[Tt]his is) (\p{Lu}[\p{L}\p{N}_-]*)/u.exec(said)?.[1]
  );
}

/**
 * A deterministic chat model for examples that must run offline. It says that it
 * is offline, and answers only from what it was given, so you can watch memory
 * work: it remembers a name told with "my name is …" or "I'm …" (also through a summary),
 * answers a question from the memory blocks it was given (the remembered line
 * sharing most words with it), reports how many earlier messages and remembered
 * lines reached it, and answers a summarization
 * prompt with an extractive summary of what the human said. Long-term memory's
 * prompts (fact extraction, subject resolution, profile) get @memoria/testkit's
 * scripted answers, which read a few sentence shapes ("X lives in Y", "my name is X").
 */
export class OfflineChatModel extends BaseChatModel {
  static override lc_name() {
    return "OfflineChatModel";
  }

  _llmType(): string {
    return "offline";
  }

  /** The answer for a prompt: a pure function of the messages. */
  static answer(messages: BaseMessage[]): string {
    const last = messages[messages.length - 1];
    const question = last ? text(last) : "";
    const memoryAnswer = answerMemoryPrompt(question);
    if (memoryAnswer !== undefined) return memoryAnswer;
    const summarize = /^Progressively summarize[\s\S]*Current summary:\n([\s\S]*?)\n\nNew lines of conversation:\n([\s\S]*?)\n\nNew summary:/.exec(question);
    if (summarize) {
      // An extractive summary: what the human said, appended to the summary so far.
      const said = (summarize[2] ?? "")
        .split("\n")
        .filter((line) => line.startsWith("Human: "))
        .map((line) => `The human said: "${line.slice(7)}".`);
      return [summarize[1], ...said].filter(Boolean).join(" ");
    }
    // Memory blocks are not messages of the conversation, in whichever role they came.
    const earlier = messages.slice(0, -1).filter((m) => m.getType() !== "system" && !text(m).startsWith("<memory kind="));
    const system = messages.find((m) => m.getType() === "system");
    // Names told by the human, directly or through a summary in a system message.
    const names = messages
      .filter((m) => m.getType() === "human" || m.getType() === "system")
      .map((m) => nameIn(text(m)))
      .filter((name): name is string => name !== undefined);
    const remembered = rememberedLines(messages.slice(0, -1));
    const fromMemory = /\?\s*$/.test(question) ? bestRemembered(question, remembered) : undefined;
    const parts = ["[offline model]"];
    if (system) parts.push(`(system: ${text(system)})`);
    if (ASKS_NAME.test(question)) {
      parts.push(names.length > 0 ? `Your name is ${names[names.length - 1]}.` : "I don't know your name: nobody told me.");
    } else if (nameIn(question) !== undefined) {
      parts.push(`Nice to meet you, ${names[names.length - 1]}!`);
    } else if (fromMemory) {
      parts.push(`From memory: ${fromMemory.text}${/[.!?]$/.test(fromMemory.text) ? "" : "."}`);
    } else {
      parts.push(`You said: "${question}".`);
    }
    const given = `I was given ${earlier.length} earlier message${earlier.length === 1 ? "" : "s"}`;
    parts.push(remembered.length > 0 ? `${given} and ${remembered.length} remembered line${remembered.length === 1 ? "" : "s"}.` : `${given}.`);
    return parts.join(" ");
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const content = OfflineChatModel.answer(messages);
    return { generations: [{ text: content, message: new AIMessage({ content, response_metadata: { model_name: "offline" } }) }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const words = OfflineChatModel.answer(messages).split(/(?<= )/);
    for (const word of words) {
      const chunk = new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ content: word }) });
      yield chunk;
      await runManager?.handleLLMNewToken(word);
    }
  }
}
