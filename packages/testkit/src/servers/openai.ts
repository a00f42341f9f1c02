import { type IncomingMessage, type ServerResponse, createServer } from "node:http";

/** A chat-completions request as the client sent it. */
export interface ChatCompletionRequest {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string; name?: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: { type: string; function: { name: string } }[];
  /** Legacy function calling (the classic openai-functions agent): answered with `function_call`. */
  functions?: { name: string }[];
  [field: string]: unknown;
}

/** What the server answers: text, tool calls, or both. */
export interface ChatCompletionReply {
  content?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** Token counts to report; derived from the text lengths when left out. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** When streaming, wait this long before each text delta: a slow model, for stopping a stream halfway. */
  delayMs?: number;
}

export type Responder = (request: ChatCompletionRequest) => ChatCompletionReply | Promise<ChatCompletionReply>;

/** Embeds texts for `/v1/embeddings` (e.g. `new HashingEmbeddings().embedDocuments`). */
export type Embedder = (texts: string[]) => number[][] | Promise<number[][]>;

/** An embeddings request as the client sent it. */
export interface EmbeddingsRequest {
  model: string;
  input: string | string[];
  encoding_format?: "float" | "base64";
  [field: string]: unknown;
}

export interface OpenAICompatibleServer {
  /** The base URL to give the client, ending in `/v1`. */
  baseURL: string;
  /** Every chat-completions request body received, in order. */
  requests: ChatCompletionRequest[];
  /** Every embeddings request body received, in order. */
  embeddingRequests: EmbeddingsRequest[];
  stop(): Promise<void>;
}

/** A request's whole body as text: what a test's HTTP server reads before answering. */
export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** The embeddings answer, as floats or (what the openai client asks for by default) base64 of little-endian float32. */
async function embeddingsReply(body: EmbeddingsRequest, embed: Embedder) {
  const texts = Array.isArray(body.input) ? body.input : [body.input];
  const vectors = await embed(texts);
  const data = vectors.map((vector, index) => ({
    object: "embedding",
    index,
    embedding: body.encoding_format === "base64" ? Buffer.from(Float32Array.from(vector).buffer).toString("base64") : vector,
  }));
  const tokens = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return { object: "list", data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** Splits text into stream deltas of a few characters, as a model streams tokens. */
function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/**
 * A local HTTP server speaking OpenAI's chat-completions protocol on a free
 * loopback port: JSON answers, SSE streaming (with a usage chunk when
 * `stream_options.include_usage` asks for it), and tool calls in both. What it
 * answers is up to `respond`, so tests drive the real `@langchain/openai` client
 * end to end and inspect exactly what it sent. With `embed`, it also answers
 * `/v1/embeddings` (for `OpenAIEmbeddings`).
 */
export async function startOpenAICompatibleServer(respond: Responder, options: { embed?: Embedder } = {}): Promise<OpenAICompatibleServer> {
  const requests: ChatCompletionRequest[] = [];
  const embeddingRequests: EmbeddingsRequest[] = [];
  let counter = 0;
  const server = createServer(async (request, response) => {
    try {
      if (request.method === "POST" && request.url?.endsWith("/embeddings") && options.embed) {
        const body = JSON.parse(await readBody(request)) as EmbeddingsRequest;
        embeddingRequests.push(body);
        sendJson(response, 200, await embeddingsReply(body, options.embed));
        return;
      }
      if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
        sendJson(response, 404, { error: { message: `no route ${request.method} ${request.url}`, type: "invalid_request_error" } });
        return;
      }
      const body = JSON.parse(await readBody(request)) as ChatCompletionRequest;
      requests.push(body);
      const reply = await respond(body);
      const id = `chatcmpl-${++counter}`;
      const created = Math.floor(Date.now() / 1000);
      const content = reply.content ?? (reply.toolCalls ? null : "");
      const toolCalls = reply.toolCalls?.map((call, index) => ({
        index,
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      }));
      // A request with legacy `functions` gets its (first) call as `function_call`, as OpenAI answers it.
      const functionCall =
        body.functions?.length && reply.toolCalls?.[0] ? { name: reply.toolCalls[0].name, arguments: reply.toolCalls[0].arguments } : undefined;
      const finish = functionCall ? "function_call" : toolCalls ? "tool_calls" : "stop";
      const promptTokens = reply.usage?.prompt_tokens ?? JSON.stringify(body.messages).length;
      const completionTokens = reply.usage?.completion_tokens ?? (content ?? "").length + JSON.stringify(toolCalls ?? []).length;
      const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
      if (!body.stream) {
        sendJson(response, 200, {
          id,
          object: "chat.completion",
          created,
          model: body.model,
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content,
                ...(functionCall ? { function_call: functionCall } : toolCalls ? { tool_calls: toolCalls.map(({ index: _, ...call }) => call) } : {}),
              },
              finish_reason: finish,
              logprobs: null,
            },
          ],
          usage,
        });
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      const chunk = (delta: unknown, finishReason: string | null = null, extra: Record<string, unknown> = {}) =>
        response.write(
          `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }], ...extra })}\n\n`,
        );
      chunk({ role: "assistant", content: "" });
      for (const piece of pieces(content ?? "")) {
        if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
        if (response.destroyed) return; // the client went away
        chunk({ content: piece });
      }
      if (functionCall) chunk({ function_call: functionCall });
      for (const call of functionCall ? [] : (toolCalls ?? [])) {
        chunk({ tool_calls: [{ index: call.index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
        for (const part of pieces(call.function.arguments)) chunk({ tool_calls: [{ index: call.index, function: { arguments: part } }] });
      }
      chunk({}, finish);
      if (body.stream_options?.include_usage) {
        response.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage })}\n\n`);
      }
      response.end("data: [DONE]\n\n");
    } catch (error) {
      if (!response.headersSent) sendJson(response, 500, { error: { message: String(error), type: "server_error" } });
      else response.end();
    }
  });
  // Idle keep-alive sockets stay open until stop(): a server that closes one after its
  // timeout (Node's 5 s) races a client reusing it, and a loaded machine loses that race
  // as ECONNRESET. No real provider's connection is under test here.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    embeddingRequests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
