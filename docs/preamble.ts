/**
 * The names the code blocks of README.md, docs/ and the package READMEs use
 * without defining them: your model, your prompt, your store. Everything else a
 * block uses, it imports itself.
 *
 * docs/test/docs.test.ts runs every block with the names it uses from here in
 * scope, in an empty folder, with OPENAI_BASE_URL pointing at a local server
 * that speaks the OpenAI protocol (so `new ChatOpenAI(…)` works offline). A block
 * that needs a server of its own (PostgreSQL, Redis, MongoDB) is type-checked
 * only; a block that is a fragment of a larger program says so in its first line.
 */
import { randomBytes } from "node:crypto";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import { createInMemoryStore, encodeMessage } from "@memoria/core";
import { HashingEmbeddings } from "@memoria/memory/long-term";
import { createSqliteStore } from "@memoria/sql";
import { tool } from "langchain";
import pg from "pg";
import { z } from "zod";

/** A chat model; any LangChain chat model does. */
export const model = new ChatOpenAI({ model: "gpt-4o-mini" });
/** A cheaper model for titles. */
export const titleModel = model;
/** Offline embeddings; `new OpenAIEmbeddings()` in an app. */
export const embeddings = new HashingEmbeddings();

/** A prompt with the history's slot, taking the new message as `question`. */
export const prompt = ChatPromptTemplate.fromMessages([
  ["system", "You are a helpful assistant."],
  new MessagesPlaceholder("history"),
  ["human", "{question}"],
]);
/** The runnable to give a memory: here the model itself, which takes the history and the input as messages. */
export const runnable = model;

/** Your store: SQLite, the embedded default, in the folder the block runs in. */
export const store = createSqliteStore({ path: "./history.db" });
/** A conversation of six messages in `store`. */
export const key = { userId: "ada", conversationId: "c1" };
export const sessionId = "s1";
await store.append(key, [
  new HumanMessage("My name is Ada."),
  new AIMessage("Nice to meet you, Ada."),
  new HumanMessage("I live in Lisbon."),
  new AIMessage("Lisbon is lovely."),
  new HumanMessage("Which river runs through it?"),
  new AIMessage("The Tagus."),
]);
/** The store an encrypting or redacting wrapper goes around. */
export const inner = createInMemoryStore();
/** Another store, e.g. the one that anchors an encrypted store's rollback checks. */
export const otherStore = createInMemoryStore();

/** Master keys: 32 random bytes each, base64; in an app they come from a secret manager. */
export const k1 = randomBytes(32).toString("base64");
export const k2 = randomBytes(32).toString("base64");
export const oldKey = k1;
export const newKey = k2;
export const keys = { k1, k2 };
export const idSecret = randomBytes(32).toString("base64");
process.env.MEMORIA_KEY_A ??= k1;
process.env.MEMORIA_KEY_2026_11 ??= k2;
process.env.MEMORIA_ID_SECRET ??= idSecret;

/** The user your app authenticated for this request. */
export const authenticatedUser = "ada";
export const log = (...values: unknown[]) => console.log(...values);
export const reportError = (error: unknown) => console.error(error);

/** A tool for agents. */
export const getWeather = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});
export const tools = [getWeather];

/** A LangGraph workflow: one node that calls the model. */
export const workflow = new StateGraph(MessagesAnnotation)
  .addNode("model", async ({ messages }) => ({ messages: [await model.invoke(messages)] }))
  .addEdge("__start__", "model")
  .addEdge("model", "__end__");

/** Rows of another history, as LangChain's stores keep them. */
export const rows = [{ message: encodeMessage(new HumanMessage("hello from before")) }];

/** Your pg pool (a block that uses it needs a server, so it is only type-checked). */
export const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

/** A store of your own, for the testkit's suite. */
export const createMyStore = (_options: { ttlSeconds?: number } = {}) => createInMemoryStore();
