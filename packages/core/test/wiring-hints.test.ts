import { AIMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { RunnableWithMessageHistory, createInMemoryStore } from "../src/index.js";

// The two wiring mistakes new users make most: the prompt's placeholder named otherwise
// than historyMessagesKey, and an inputMessagesKey the input does not have.
const prompt = ChatPromptTemplate.fromMessages([["system", "Be brief."], new MessagesPlaceholder("chat_history"), ["human", "{input}"]]);
const model = RunnableLambda.from(async () => new AIMessage("ok"));
const config = { configurable: { sessionId: "s" } };

describe("wiring hints", () => {
  it("a placeholder the wrapper does not fill: LangChain's error, with the option to set", async () => {
    const store = createInMemoryStore();
    const chain = new RunnableWithMessageHistory({ runnable: prompt.pipe(model), store, inputMessagesKey: "input" });
    const failed = (await chain.invoke({ input: "hi" }, config).catch((error: unknown) => error)) as Error & { lc_error_code?: string };
    expect(failed.lc_error_code).toBe("INVALID_PROMPT_INPUT"); // still LangChain's error
    expect(failed.message).toMatch(
      /^Missing value for input variable `chat_history`\. memoria: If "chat_history" is the prompt's MessagesPlaceholder for the conversation, set historyMessagesKey: "chat_history"/,
    );
    expect(await store.count({ sessionId: "s" })).toBe(0);

    const named = new RunnableWithMessageHistory({ runnable: prompt.pipe(model), store, inputMessagesKey: "input", historyMessagesKey: "history" });
    const other = (await named
      .stream({ input: "hi" }, config)
      .then(async (stream) => {
        for await (const _ of stream);
      })
      .catch((error: unknown) => error)) as Error;
    expect(other.message).toContain(
      'The history goes under historyMessagesKey "history": if the prompt\'s MessagesPlaceholder is "chat_history", set historyMessagesKey: "chat_history"',
    );

    const right = new RunnableWithMessageHistory({ runnable: prompt.pipe(model), store, inputMessagesKey: "input", historyMessagesKey: "chat_history" });
    expect(await right.invoke({ input: "hi" }, config)).toMatchObject({ content: "ok" });
  });

  it("a prompt variable that is simply missing from the input is not blamed on the history", async () => {
    const withTopic = ChatPromptTemplate.fromMessages([new MessagesPlaceholder("history"), ["human", "{topic}: {input}"]]);
    const chain = new RunnableWithMessageHistory({
      runnable: withTopic.pipe(model),
      store: createInMemoryStore(),
      inputMessagesKey: "input",
      historyMessagesKey: "history",
    });
    const failed = (await chain.invoke({ input: "hi" }, config).catch((error: unknown) => error)) as Error;
    expect(failed.message).toContain("Missing value for input variable `topic`");
    expect(failed.message).toContain('otherwise pass "topic" in the input');
  });

  it("an inputMessagesKey the input lacks: the error lists the fields it has", async () => {
    const chain = new RunnableWithMessageHistory({
      runnable: prompt.pipe(model),
      store: createInMemoryStore(),
      inputMessagesKey: "question",
      historyMessagesKey: "chat_history",
    });
    await expect(chain.invoke({ input: "hi", topic: "maps" }, config)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('Its fields: "input", "topic"; set inputMessagesKey to the one that holds the user\'s message.'),
    });
  });
});
