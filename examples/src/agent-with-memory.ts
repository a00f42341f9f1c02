/**
 * Seed 004's agent with memory, in TypeScript: a tool-calling agent whose prompt
 * has a MessagesPlaceholder("history"). Its tool call (an AIMessage with
 * tool_calls) and the tool's result (a ToolMessage) are stored with the turn, so
 * the next turn's prompt holds them, in order.
 *
 *   pnpm --filter @memoria/examples agent-with-memory
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";

/** The tool the agent can call. */
function lookupWeather(city: string): string {
  return { Oslo: "-3°C and snowing", Lisbon: "18°C and sunny" }[city] ?? "unknown";
}

/**
 * An offline stand-in for a tool-calling model: asked about the weather, it calls
 * the tool; given a tool result, it answers from it; otherwise it answers from the
 * most recent tool result in the history it was given.
 */
function offlineToolModel(messages: BaseMessage[]): AIMessage {
  const last = messages[messages.length - 1] as BaseMessage;
  if (last.getType() === "tool") return new AIMessage(`[offline model] The weather there: ${last.content}.`);
  const city = /weather in (\w+)/i.exec(String(last.content))?.[1];
  if (city) return new AIMessage({ content: "", tool_calls: [{ id: `call_${city}`, name: "lookup_weather", args: { city }, type: "tool_call" }] });
  const earlier = [...messages].reverse().find((m) => m.getType() === "tool");
  return new AIMessage(`[offline model] From our earlier lookup: ${earlier ? earlier.content : "nothing yet"}.`);
}

/** The agent: call the model, run any tool it asks for, call it again; return every new message. */
const agent = RunnableLambda.from(async (messages: BaseMessage[]) => {
  const added: BaseMessage[] = [];
  for (let step = 0; step < 5; step++) {
    const reply = offlineToolModel([...messages, ...added]);
    added.push(reply);
    if (!reply.tool_calls?.length) break;
    for (const call of reply.tool_calls) {
      added.push(new ToolMessage({ content: lookupWeather(String(call.args.city)), tool_call_id: call.id as string, name: call.name }));
    }
  }
  return added;
});

export async function main(log: (line: string) => void = console.log, path = ":memory:"): Promise<void> {
  const prompt = ChatPromptTemplate.fromMessages([
    ["system", "You are an assistant with a weather tool."],
    new MessagesPlaceholder("history"),
    ["human", "{input}"],
  ]);
  const store = createSqliteStore({ path });
  const withMemory = new RunnableWithMessageHistory({
    runnable: prompt.pipe(RunnableLambda.from((value: { messages: BaseMessage[] }) => value.messages)).pipe(agent),
    store,
    inputMessagesKey: "input",
    historyMessagesKey: "history",
  });
  const config = { configurable: { sessionId: "agent" } };
  for (const input of ["What is the weather in Oslo?", "Should I take a coat?"]) {
    const added = (await withMemory.invoke({ input }, config)) as BaseMessage[];
    log(`? ${input}`);
    log(`> ${added[added.length - 1]?.content}`);
  }
  for (const message of await store.read(config.configurable)) {
    const calls = (message as AIMessage).tool_calls?.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(", ");
    log(`  ${message.getType()}: ${calls ? `calls ${calls}` : message.content}`);
  }
  await store.close();
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
