import { type Server, createServer } from "node:http";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { HistoryStore, MemoryStrategy } from "@memoria/core";
import { type ChatCompletionRequest, type OpenAICompatibleServer, readBody, startOpenAICompatibleServer } from "@memoria/testkit/servers";
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
  consumeStream,
  convertToModelMessages,
  createIdGenerator,
  stepCountIs,
  streamText,
  tool,
  validateUIMessages,
  wrapLanguageModel,
} from "ai";
import { z } from "zod";
import { type ChatSaverOptions, chatSaver, loadChat, memoriaMemory } from "../src/index.js";

/*
 * A chat app as the AI SDK's docs build one, on plain Node: POST /api/chat streams
 * an answer with streamText (a real OpenAI-compatible provider, against the local
 * OpenAI-protocol server) and saves the turn with chatSaver; GET /api/chat/:id
 * gives the stored chat back for a reload. The client is the SDK's own chat
 * class with DefaultChatTransport, as useChat drives it.
 */

const tools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, temperature: 18 }),
  }),
};

function text(message: ChatCompletionRequest["messages"][number] | undefined): string {
  const { content } = message ?? {};
  return typeof content === "string" ? content : Array.isArray(content) ? content.map((part) => (part as { text?: string }).text ?? "").join("") : "";
}

/** The answer to "tell me a story": 22 words, 40 ms apart (about a second). */
export const STORY = "Once upon a time there was a very long story that went on and on and on and never stopped at all.";

/**
 * The answer to "tell me a long story": 40 ms a word for over a minute, so a stop
 * always lands mid-answer. A short story once finished before a click on Stop reached
 * a busy machine's Chromium, and the test that stops it failed.
 */
export const LONG_STORY = `Once upon a time ${"there was a story that went on and on, ".repeat(200)}and then it stopped.`;

/** The local model: asks for the weather tool when asked about weather, tells a slow story when asked, echoes otherwise. */
export function startModel(): Promise<OpenAICompatibleServer> {
  let calls = 0;
  return startOpenAICompatibleServer((request) => {
    const last = request.messages.at(-1);
    if (last?.role === "tool") return { content: `It is ${JSON.parse(text(last)).temperature} degrees in ${JSON.parse(text(last)).city}.` };
    const said = text(last);
    if (said.includes("weather")) return { toolCalls: [{ id: `call-${++calls}`, name: "weather", arguments: '{"city":"Paris"}' }] };
    if (said.includes("story")) return { content: said.includes("long story") ? LONG_STORY : STORY, delayMs: 40 };
    return { content: `You said: ${said}` };
  });
}

export interface ChatApp {
  url: string;
  /** Bodies the app received on POST /api/chat, in order. */
  bodies: Record<string, unknown>[];
  /** Resolves when the save of the n-th request (1-based) has run. */
  saved(n: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `onDisconnect: "stop"` ends generation when the client goes away (useChat's
 * stop() is that); `"finish"` keeps generating and saves the whole answer.
 */
export interface ChatAppOptions {
  onDisconnect: "stop" | "finish";
  saver?: ChatSaverOptions;
  /** Keep what each model call was given (memoriaMemory's recordPrompts). */
  recordPrompts?: boolean;
  /** Long-term memory: given to the model by memoriaMemory, its work scheduled by chatSaver. */
  memory?: MemoryStrategy[];
  /** What the model gets of the chat, rather than all of it: a memoria strategy (a window). */
  window?: MemoryStrategy;
  /** A chat page to serve at / (its HTML) and /page.js (its bundled script). */
  page?: { html: string; script: string };
}

export async function startChatApp(store: HistoryStore, modelURL: string, options: ChatAppOptions): Promise<ChatApp> {
  const provider = createOpenAICompatible({ name: "local", baseURL: modelURL, apiKey: "test" });
  const bodies: Record<string, unknown>[] = [];
  const saves: { promise: Promise<void>; resolve: () => void }[] = [];
  const savedSlot = (n: number) => {
    while (saves.length < n) {
      let resolve = () => {};
      const promise = new Promise<void>((done) => (resolve = done));
      saves.push({ promise, resolve });
    }
    return saves[n - 1] as { promise: Promise<void>; resolve: () => void };
  };
  const server: Server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? "/", "http://local");
      const keyOf = (id: string) => ({ userId: "u1", sessionId: id });
      if (request.method === "GET" && options.page && (url.pathname === "/" || url.pathname === "/page.js")) {
        const js = url.pathname === "/page.js";
        response.writeHead(200, { "content-type": js ? "text/javascript" : "text/html" }).end(js ? options.page.script : options.page.html);
        return;
      }
      if (request.method === "GET" && url.pathname.startsWith("/api/chat/")) {
        const chat = await loadChat(store, keyOf(decodeURIComponent(url.pathname.slice("/api/chat/".length))), { tools });
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(chat.messages));
        return;
      }
      const body = JSON.parse(await readBody(request)) as { id: string; messages: unknown; trigger: string; messageId?: string };
      bodies.push(body);
      const slot = savedSlot(bodies.length);
      const messages = await validateUIMessages<UIMessage>({ messages: body.messages, tools });
      const abort = new AbortController();
      if (options.onDisconnect === "stop") response.on("close", () => response.writableFinished || abort.abort());
      const key = keyOf(body.id);
      const base = provider.chatModel("local-model");
      const model =
        options.memory || options.recordPrompts
          ? wrapLanguageModel({ model: base, middleware: memoriaMemory({ store, key, memory: options.memory, recordPrompts: options.recordPrompts }) })
          : base;
      // With a window, the model gets the newest stored messages and the new one; the UI and the save keep the whole chat.
      const forModel = options.window
        ? [...(await loadChat(store, key, { strategy: options.window, tools })).messages, messages.at(-1) as UIMessage]
        : messages;
      const result = streamText({
        model,
        messages: await convertToModelMessages(forModel),
        tools,
        stopWhen: stepCountIs(3),
        abortSignal: abort.signal,
      });
      const save = chatSaver(store, key, { ...options.saver, memory: options.memory, request: body });
      result.pipeUIMessageStreamToResponse(response, {
        originalMessages: messages,
        generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
        // A copy of the stream read here to its end: a client that goes away does not stop the answer or its save.
        ...(options.onDisconnect === "finish" ? { consumeSseStream: consumeStream } : {}),
        onFinish: async (event) => {
          try {
            await save(event);
          } finally {
            slot.resolve();
          }
        },
      });
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
      else response.end();
    }
  });
  server.keepAliveTimeout = 0; // idle sockets stay until stop(), so a reused one is never closed under the client (ECONNRESET)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    bodies,
    saved: (n) => savedSlot(n).promise,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The state useChat keeps in React, kept in plain fields. */
class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  constructor(public messages: UIMessage[]) {}
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((old, at) => (at === index ? message : old));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's chat client, as useChat runs it, against the app. */
export class Chat extends AbstractChat<UIMessage> {
  constructor(appURL: string, id: string, messages: UIMessage[] = [], init: Omit<ChatInit<UIMessage>, "messages" | "transport" | "id"> = {}) {
    super({ ...init, id, transport: new DefaultChatTransport({ api: `${appURL}/api/chat` }), state: new PlainChatState(messages) });
  }
}

/** What a reload does: the stored chat, from the app. */
export async function reload(appURL: string, id: string): Promise<UIMessage[]> {
  const response = await fetch(`${appURL}/api/chat/${encodeURIComponent(id)}`);
  return (await response.json()) as UIMessage[];
}
