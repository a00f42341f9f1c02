import { timingSafeEqual } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { SessionKeyFilter } from "@memoria/core";
import { type MemoriaMcpOptions, loadSdk, memoriaMcpServer } from "./mcp-server.js";

export interface McpHttpOptions extends Omit<MemoriaMcpOptions, "scope"> {
  /**
   * Decides who is calling and which one scope they get: return it, or undefined
   * to refuse the request (401). Called for every request, before anything is read.
   */
  scopeOf(request: IncomingMessage): SessionKeyFilter | undefined | Promise<SessionKeyFilter | undefined>;
  /** @default 0 (a free port) */
  port?: number;
  /** @default "127.0.0.1": loopback only */
  host?: string;
  /**
   * Web origins (`https://app.example`) whose pages may call the server, besides its
   * own address. A request with any other `Origin` header is refused (403).
   * @default []
   */
  origins?: readonly string[];
  /** Requests one caller (one scope) may have open at once; more are answered 429. @default 8 */
  maxOpenPerCaller?: number;
  /**
   * Where a failure inside a request is reported: the client gets a 500 with no
   * internal text (an error's message may hold a connection string).
   * @default one line on stderr
   */
  onError?: (error: unknown) => void;
}

export interface McpHttpServer {
  /** The endpoint to give a client, e.g. `http://127.0.0.1:4312/mcp`. */
  url: string;
  close(): Promise<void>;
}

/** The `scopeOf` of a server with one bearer token for one scope: anything else is refused. */
export function bearerScope(token: string, scope: SessionKeyFilter): (request: IncomingMessage) => SessionKeyFilter | undefined {
  const expected = Buffer.from(`Bearer ${token}`);
  return (request) => {
    const given = Buffer.from(request.headers.authorization ?? "");
    return given.length === expected.length && timingSafeEqual(given, expected) ? scope : undefined;
  };
}

/**
 * memoria's MCP server over streamable HTTP, stateless: each POST to `/mcp` is
 * served by a server bound to the scope `scopeOf` gives its caller, and answered
 * with JSON; no event stream is opened (GET is 405, as the protocol allows).
 * Refused: a Host other than the address it listens on (DNS rebinding), an
 * `Origin` not allowed, more than `maxOpenPerCaller` open requests of one caller.
 */
export async function startMcpHttp(options: McpHttpOptions): Promise<McpHttpServer> {
  const { StreamableHTTPServerTransport } = await loadSdk();
  const host = options.host ?? "127.0.0.1";
  const maxOpen = options.maxOpenPerCaller ?? 8;
  const report =
    options.onError ?? ((error: unknown) => process.stderr.write(`memoria mcp: a request failed: ${error instanceof Error ? error.message : String(error)}\n`));
  const open = new Map<string, number>();
  let hosts: string[] = [];
  let origins: string[] = [];

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!hosts.includes(request.headers.host ?? "")) return refuse(response, 403, "This server answers only on its own address.");
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.includes(origin)) return refuse(response, 403, "This server does not answer pages of that origin.");
    if (new URL(request.url ?? "/", "http://local").pathname !== "/mcp") return refuse(response, 404, "The MCP endpoint is /mcp.");
    if (request.method !== "POST") {
      response.setHeader("allow", "POST");
      return refuse(response, 405, "This server is stateless: POST each message to /mcp; it opens no event stream.");
    }
    const scope = await options.scopeOf(request);
    if (!scope) {
      response.setHeader("www-authenticate", 'Bearer realm="memoria"');
      return refuse(response, 401, "A valid bearer token is required.");
    }
    const caller = JSON.stringify(Object.entries(scope).sort(([a], [b]) => (a < b ? -1 : 1)));
    const count = open.get(caller) ?? 0;
    if (count >= maxOpen) {
      response.setHeader("retry-after", "1");
      return refuse(response, 429, `At most ${maxOpen} requests of one caller are served at once; retry when one has been answered.`);
    }
    open.set(caller, count + 1);
    response.on("close", () => {
      const left = (open.get(caller) ?? 1) - 1;
      if (left === 0) open.delete(caller);
      else open.set(caller, left);
    });
    const server = await memoriaMcpServer({ ...options, scope });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }

  const http: Server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      report(error);
      if (!response.headersSent) refuse(response, 500, "The request failed inside the server; the server's log says why.");
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  hosts = [`${host}:${port}`, ...(host === "127.0.0.1" ? [`localhost:${port}`] : [])];
  origins = [...hosts.map((address) => `http://${address}`), ...(options.origins ?? [])];
  return {
    url: `http://${host}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null }));
}
