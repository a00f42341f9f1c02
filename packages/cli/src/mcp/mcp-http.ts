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
 * memoria's MCP server over streamable HTTP (stateless: each POST to `/mcp` is
 * served by a server bound to the scope `scopeOf` gives its caller). Requests
 * whose Host is not the address it listens on are refused (DNS rebinding).
 */
export async function startMcpHttp(options: McpHttpOptions): Promise<McpHttpServer> {
  const { StreamableHTTPServerTransport } = await loadSdk();
  const host = options.host ?? "127.0.0.1";
  let hosts: string[] = [];

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!hosts.includes(request.headers.host ?? "")) return refuse(response, 403, "This server answers only on its own address.");
    if (new URL(request.url ?? "/", "http://local").pathname !== "/mcp") return refuse(response, 404, "The MCP endpoint is /mcp.");
    const scope = await options.scopeOf(request);
    if (!scope) {
      response.setHeader("www-authenticate", 'Bearer realm="memoria"');
      return refuse(response, 401, "A valid bearer token is required.");
    }
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
      if (!response.headersSent) refuse(response, 500, error instanceof Error ? error.message : String(error));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  hosts = [`${host}:${port}`, ...(host === "127.0.0.1" ? [`localhost:${port}`] : [])];
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
