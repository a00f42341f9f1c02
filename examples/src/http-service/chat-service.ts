import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import {
  type AccessRequest,
  type Authorize,
  ForbiddenError,
  type HistoryStore,
  InvalidSessionKeyError,
  MemoriaError,
  RunnableWithMessageHistory,
} from "@memoria/core";
import { guardStore } from "@memoria/privacy";

export interface ChatServiceOptions {
  store: HistoryStore;
  model: BaseChatModel;
  /**
   * Who a bearer token belongs to. Stands in for your real authentication (a
   * session cookie, a verified JWT): the point is that the user id comes from it.
   */
  authenticate: (token: string) => string | undefined;
  /**
   * Who may do what to which conversation, asked before every read and write with
   * the caller's user id as `config.configurable.caller`.
   * @default {@link ownConversationsOnly}
   */
  authorize?: Authorize;
  /** Largest request body accepted, in bytes. @default 64 KiB */
  maxBodyBytes?: number;
}

/** The default policy: a user reaches only sessions whose userId is their own. */
export function ownConversationsOnly({ key, config }: AccessRequest): boolean {
  return key.userId !== undefined && key.userId === config?.configurable?.caller;
}

/** Users in `support` may also read (never write) anyone's conversations. */
export function supportMayRead(support: ReadonlySet<string>): Authorize {
  return (request) => ownConversationsOnly(request) || (request.action === "read" && support.has(String(request.config?.configurable?.caller)));
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readJson(request: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, `request body over ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("not an object");
    return body;
  } catch {
    throw new HttpError(400, "the body must be a JSON object");
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  response.end(JSON.stringify(body));
}

/**
 * A chat service over HTTP, one conversation per (user, conversation id):
 *
 * - `POST /chat` `{ conversationId, message }`: the answer, streamed as plain text;
 * - `GET /conversations`: the caller's conversation ids;
 * - `GET /conversations/:id/messages`: one of the caller's conversations;
 * - `GET /users/:userId/conversations/:id/messages`: another user's conversation,
 *   where `authorize` allows it (a support role, say); 403 otherwise.
 *
 * Every request needs `Authorization: Bearer <token>`. The user id comes from the
 * token, never from the body or the URL, and is a session field, so no request can
 * reach another user's conversation: guessing an id only names one's own. Every
 * store call also goes through `authorize`, as the caller, so a route that names
 * another user is checked, not trusted.
 */
export function createChatService(options: ChatServiceOptions) {
  const { authenticate } = options;
  const authorize = options.authorize ?? ownConversationsOnly;
  const guarded = guardStore(options.store, authorize);
  const limit = options.maxBodyBytes ?? 64 * 1024;
  const prompt = ChatPromptTemplate.fromMessages([["system", "You are a helpful assistant."], new MessagesPlaceholder("history"), ["human", "{message}"]]);
  const chat = new RunnableWithMessageHistory({
    runnable: prompt.pipe(options.model),
    store: options.store,
    authorize,
    sessionFields: ["userId", "conversationId"],
    inputMessagesKey: "message",
    historyMessagesKey: "history",
  });

  function userOf(request: IncomingMessage): string {
    const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "");
    const userId = match?.[1] ? authenticate(match[1]) : undefined;
    if (!userId) throw new HttpError(401, "missing or unknown bearer token");
    return userId;
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? "/", "http://service");
    const userId = userOf(request);
    const store = guarded.as({ configurable: { caller: userId } });
    if (request.method === "POST" && url.pathname === "/chat") {
      const body = await readJson(request, limit);
      if (typeof body.message !== "string" || body.message.length === 0) throw new HttpError(400, '"message" must be a non-empty string');
      // body.userId, if a client sends one, is ignored: the token decides.
      const config = { configurable: { userId, conversationId: body.conversationId, caller: userId }, signal: abortOnClose(response) };
      const stream = await chat.stream({ message: body.message }, config);
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" });
      for await (const chunk of stream) response.write(typeof chunk.content === "string" ? chunk.content : chunk.text);
      response.end();
      return;
    }
    if (request.method === "GET" && url.pathname === "/conversations") {
      const page = await store.list({ userId }, { limit: 100, cursor: url.searchParams.get("cursor") ?? undefined });
      sendJson(response, 200, { conversations: page.sessions.map((key) => key.conversationId), cursor: page.cursor ?? null });
      return;
    }
    const messagesRoute = /^(?:\/users\/([^/]+))?\/conversations\/([^/]+)\/messages$/.exec(url.pathname);
    if (request.method === "GET" && messagesRoute) {
      const owner = messagesRoute[1] === undefined ? userId : decodePathSegment(messagesRoute[1]);
      const conversationId = decodePathSegment(messagesRoute[2] as string);
      const messages = await store.read({ userId: owner, conversationId });
      sendJson(response, 200, { messages: messages.map((m) => ({ role: m.getType(), content: m.content })) });
      return;
    }
    throw new HttpError(404, `no route ${request.method} ${url.pathname}`);
  }

  return createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy(error as Error); // mid-stream: the client sees a broken response, not a clean end
        return;
      }
      if (error instanceof HttpError) sendJson(response, error.status, { error: error.message });
      else if (ForbiddenError.isInstance(error)) sendJson(response, 403, { error: "forbidden" });
      else if (InvalidSessionKeyError.isInstance(error)) sendJson(response, 400, { error: `invalid ${error.field}: ${error.reason}` });
      else if (MemoriaError.isInstance(error)) sendJson(response, error.code === "SESSION_BUSY" ? 409 : 503, { error: error.code });
      else sendJson(response, 500, { error: "internal error" });
    });
  });
}

/** A percent-encoded path segment, or a 400 when its encoding is malformed (`%E0%A4%A`). */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "malformed percent-encoding in the path");
  }
}

/** Aborts the turn when the client goes away before the answer is complete. */
function abortOnClose(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.on("close", () => {
    if (!response.writableFinished) controller.abort(new Error("client disconnected"));
  });
  return controller.signal;
}
