/**
 * memoria's demo: a terminal chat that remembers, its history in SQLite.
 *
 *   pnpm demo                                         talk; /help lists commands, /quit leaves
 *   pnpm demo --session s1 --message "My name is Ada"  one turn, for scripts
 *   pnpm demo --session s1 --message "What is my name?" --verbose
 *   pnpm demo --list                                   past sessions, every user's (--user ID: one user's)
 *   pnpm demo --user ada --session trip --message "Ada lives in Lisbon"
 *   pnpm demo --user ada --session later --message "Where do I live?" --verbose
 *
 * Options: --session ID (default "default"), --user ID (default "local"; naming
 * a user also turns on long-term memory across that user's sessions: facts the
 * model extracts after each turn, and recall of earlier conversations through
 * sqlite-vec),
 * --window K (only the last K turns reach the model), --summary (recent turns
 * within --max-tokens, default 300, word for word; older ones summarized by the
 * model), --db PATH
 * (default ./.memoria/history.db), --verbose (print the prompt after formatting).
 */
import { resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import type { Embeddings } from "@langchain/core/embeddings";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type HistoryStore, type MemoryStrategy, MemoriaError, PromptPrinter, RunnableWithMessageHistory, wholeHistory } from "@memoria/core";
import { combineMemory, summaryBufferMemory, windowMemory } from "@memoria/memory";
import { factMemory, recallMemory } from "@memoria/memory/long-term";
import { DEFAULT_SQLITE_PATH, createSqliteStore } from "@memoria/sql";
import { chooseEmbeddings, chooseModel } from "./model.js";

export interface DemoIo {
  write: (text: string) => void;
  env?: NodeJS.ProcessEnv;
  /** Folder that a relative --db path is taken from. */
  cwd?: string;
  /** Lines typed by the person, for the interactive mode. */
  lines?: AsyncIterable<string>;
}

const USAGE = `usage: pnpm demo [--session ID] [--user ID (long-term memory across the user's sessions)] [--message TEXT] [--list] [--window K | --summary [--max-tokens N]] [--db PATH] [--verbose]`;

export async function runDemo(argv: string[], io: DemoIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      session: { type: "string", default: "default" },
      user: { type: "string" },
      message: { type: "string" },
      list: { type: "boolean", default: false },
      window: { type: "string" },
      summary: { type: "boolean", default: false },
      "max-tokens": { type: "string", default: "300" },
      db: { type: "string", default: DEFAULT_SQLITE_PATH },
      verbose: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    io.write(`${USAGE}\n`);
    return 0;
  }
  let memory: MemoryStrategy = wholeHistory();
  if (values.window !== undefined) {
    const k = Number(values.window);
    if (!Number.isInteger(k) || k < 0) {
      io.write(`--window takes a whole number of turns, got "${values.window}"\n${USAGE}\n`);
      return 2;
    }
    memory = windowMemory({ k });
  }
  const maxTokens = Number(values["max-tokens"]);
  if (values.summary && (!Number.isInteger(maxTokens) || maxTokens <= 0)) {
    io.write(`--max-tokens takes a whole number of tokens, got "${values["max-tokens"]}"\n${USAGE}\n`);
    return 2;
  }
  const path = resolve(io.cwd ?? process.cwd(), values.db as string);
  const store = createSqliteStore({ path });
  try {
    const user = values.user ?? "local";
    if (values.list) {
      // Every user's sessions, each with its user; with --user, that user's alone.
      let listed = 0;
      let cursor: string | undefined;
      do {
        const page = await store.list(values.user === undefined ? {} : { userId: user }, { cursor });
        for (const key of page.sessions) {
          io.write(`${key.sessionId}\t${await store.count(key)} messages${values.user === undefined ? `\tuser ${key.userId}` : ""}\n`);
          listed += 1;
        }
        cursor = page.cursor;
      } while (cursor !== undefined);
      if (listed === 0) io.write(`no sessions yet${values.user === undefined ? "" : ` for user "${user}"`} in ${path}\n`);
      return 0;
    }
    const env = io.env ?? process.env;
    const { model, description } = await chooseModel(env);
    const embeddings = await chooseEmbeddings(env);
    if (values.summary) memory = summaryBufferMemory({ model, maxTokens });
    const session = { user, sessionId: values.session as string };
    let chat = openChat({ store, model, embeddings, memory, longTerm: values.user !== undefined });
    const config = () => ({
      configurable: { userId: session.user, sessionId: session.sessionId },
      callbacks: values.verbose ? [new PromptPrinter(io.write)] : [],
    });
    const turn = async (input: string) => {
      for await (const chunk of await chat.runnable.stream({ input }, config())) io.write(typeof chunk.content === "string" ? chunk.content : chunk.text);
      io.write("\n");
    };
    if (values.message !== undefined) {
      await turn(values.message);
      await chat.idle();
      return 0;
    }
    const where = async () =>
      `user "${session.user}", session "${session.sessionId}" (${await store.count({ userId: session.user, sessionId: session.sessionId })} messages so far), long-term memory ${chat.longTerm ? "on" : "off"}`;
    io.write(`memoria demo: ${description}\nhistory: ${path}\n${await where()}\n${COMMANDS}\n> `);
    /** A line starting with "/": what the demo answers; the model never sees it. */
    const command = async (name: string, argument: string): Promise<string> => {
      if (name === "/help") return COMMANDS;
      if (name !== "/user" && name !== "/session") return `unknown command ${name}: /help lists them`;
      if (!argument) return `${name} takes a name: ${name} ${name === "/user" ? "ada" : "trip"}`;
      await chat.idle(); // what the last session taught is remembered in the next
      if (name === "/user") {
        session.user = argument;
        if (!chat.longTerm) chat = openChat({ store, model, embeddings, memory, longTerm: true });
      } else session.sessionId = argument;
      return `now ${await where()}`;
    };
    for await (const line of io.lines ?? []) {
      const input = line.trim();
      if (input === "/quit" || input === "/exit") break;
      if (input.startsWith("/")) {
        const [name = "", argument = ""] = input.split(/\s+/, 2);
        io.write(`${await command(name, argument)}\n`);
      } else if (input) await turn(input);
      io.write("> ");
    }
    await chat.idle();
    return 0;
  } catch (error) {
    if (MemoriaError.isInstance(error)) {
      io.write(`error (${error.code}): ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

const COMMANDS = "commands: /help, /user NAME (talk as NAME, with long-term memory), /session ID, /quit (or /exit); anything else goes to the model";

interface ChatOptions {
  store: HistoryStore;
  model: BaseChatModel;
  /** For recall of earlier conversations. */
  embeddings: Embeddings;
  /** What reaches the model from this session. */
  memory: MemoryStrategy;
  /** Facts and recall across the user's sessions, worked out after each saved turn. */
  longTerm: boolean;
}

/** The demo's chain: a system prompt, the history, the input; and a way to wait for long-term memory's work. */
function openChat({ store, model, embeddings, memory, longTerm }: ChatOptions) {
  const combined = longTerm ? combineMemory(factMemory({ model, scope: ["userId"] }), recallMemory({ embeddings, scope: ["userId"] }), memory) : undefined;
  const prompt = ChatPromptTemplate.fromMessages([["system", "You are memoria's demo assistant."], new MessagesPlaceholder("history"), ["human", "{input}"]]);
  const runnable = new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    store,
    sessionFields: ["userId", "sessionId"],
    inputMessagesKey: "input",
    historyMessagesKey: "history",
    memory: combined ?? memory,
    recordPrompts: true, // so `pnpm studio` shows what the model saw in each turn
  });
  return { runnable, longTerm, idle: async () => combined?.idle() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const interactive = !process.argv.slice(2).some((arg) => arg === "--message" || arg.startsWith("--message=") || arg === "--list");
  // The demo writes its own "> ", after the banner and after each answer.
  const readline = interactive ? createInterface({ input: process.stdin, terminal: false }) : undefined;
  process.exitCode = await runDemo(process.argv.slice(2), {
    write: (text) => process.stdout.write(text),
    cwd: process.env.INIT_CWD ?? process.cwd(),
    lines: readline,
  });
  readline?.close();
}
