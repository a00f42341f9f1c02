import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder, PromptTemplate } from "@langchain/core/prompts";
import { FakeChatModel, FakeLLM } from "@langchain/core/utils/testing";
import { describe, expect, it } from "vitest";
import { PromptPrinter } from "../src/index.js";

describe("PromptPrinter", () => {
  it("prints a chat prompt after formatting, as LangChain Python's verbose=True does", async () => {
    const printed: string[] = [];
    const prompt = ChatPromptTemplate.fromMessages([["system", "You are kind."], new MessagesPlaceholder("history"), ["human", "{question}"]]);
    await prompt
      .pipe(new FakeChatModel({}))
      .invoke(
        { question: "What is my name?", history: [new HumanMessage("I am Ada"), new AIMessage("Hello Ada")] },
        { callbacks: [new PromptPrinter((text) => printed.push(text))] },
      );
    expect(printed.join("")).toBe("\nPrompt after formatting:\nSystem: You are kind.\nHuman: I am Ada\nAI: Hello Ada\nHuman: What is my name?\n\n");
  });

  it("prints a text prompt as it is, for an LLM or a chat model", async () => {
    const printed: string[] = [];
    const callbacks = [new PromptPrinter((text) => printed.push(text))];
    const prompt = PromptTemplate.fromTemplate("Current conversation:\n{history}\nHuman: {input}\nAI:");
    await prompt.pipe(new FakeLLM({})).invoke({ history: "", input: "hi" }, { callbacks });
    await new FakeChatModel({}).invoke([new HumanMessage("plain text")], { callbacks });
    await new FakeChatModel({}).invoke([new SystemMessage("s"), new HumanMessage("h")], { callbacks });
    expect(printed).toEqual([
      "\nPrompt after formatting:\nCurrent conversation:\n\nHuman: hi\nAI:\n\n",
      "\nPrompt after formatting:\nplain text\n\n",
      "\nPrompt after formatting:\nSystem: s\nHuman: h\n\n",
    ]);
  });
});
