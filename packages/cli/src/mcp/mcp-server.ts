import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type HistoryStore, MemoriaError, type SessionKeyFilter, createKeyFilter, encodeSessionKey } from "@memoria/core";
import type { RecallMemory } from "@memoria/memory/long-term";
import { MEMORY_TOOL_SPECS, MemoryToolRunner } from "@memoria/memory/tools";
import { UsageError } from "../cli-error.js";
import { isMissingModule } from "../store-url.js";

export interface MemoriaMcpOptions {
  store: HistoryStore;
  /** The one scope this server (or this connection) serves, e.g. `{ userId: "ada" }`: tools never reach another. */
  scope: SessionKeyFilter;
  /** What `forget` does. @default "withdraw" */
  forget?: "withdraw" | "erase";
  /** Recalled passages for `search_memory`. */
  recall?: RecallMemory;
  /** The version the server reports to clients. */
  version?: string;
}

const SDK = "@modelcontextprotocol/sdk";
const CONVERSATION_URI = "memoria://conversation/{conversation}";
const LISTED = 100;

/** The MCP SDK, an optional peer of @memoria/cli: a usage error naming what to install when it is missing. */
export async function loadSdk() {
  try {
    const [{ McpServer, ResourceTemplate }, { StdioServerTransport }, { StreamableHTTPServerTransport }, { ErrorCode, ListResourcesRequestSchema, McpError }] =
      await Promise.all([
        import("@modelcontextprotocol/sdk/server/mcp.js"),
        import("@modelcontextprotocol/sdk/server/stdio.js"),
        import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
        import("@modelcontextprotocol/sdk/types.js"),
      ]);
    return { McpServer, ResourceTemplate, StdioServerTransport, StreamableHTTPServerTransport, ErrorCode, ListResourcesRequestSchema, McpError };
  } catch (error) {
    if (isMissingModule(error, SDK)) throw new UsageError(`memoria mcp needs ${SDK} beside @memoria/cli, and it is not installed: npm install ${SDK}`);
    throw error;
  }
}

/**
 * An MCP server over a memoria store, for one scope: the memory tools
 * (`search_memory`, `remember`, `update_profile`, `forget`, `read_conversation`,
 * with the same contract as the LangChain tools) and the scope's conversations as
 * resources. A bad argument is a tool result with `isError`; a store fault is
 * one too (the SDK answers a thrown error so), and never ends the server.
 */
export async function memoriaMcpServer(options: MemoriaMcpOptions): Promise<McpServer> {
  const { McpServer, ResourceTemplate, ErrorCode, ListResourcesRequestSchema, McpError } = await loadSdk();
  const scope = createKeyFilter(options.scope);
  if (Object.keys(scope).length === 0) throw new MemoriaError("INVALID_ARGUMENT", 'memoria mcp serves one scope: name it, e.g. { userId: "ada" }.');
  const runner = new MemoryToolRunner({ store: options.store, scope: Object.keys(scope), forget: options.forget, recall: options.recall });
  const call = runner.bind({ configurable: { ...scope } });
  const server = new McpServer({ name: "memoria", version: options.version ?? "0.0.0" }, { capabilities: { tools: {}, resources: {} } });

  for (const name of runner.names) {
    const spec = MEMORY_TOOL_SPECS[name];
    server.registerTool(name, { description: spec.description, inputSchema: spec.schema.shape }, async (args: Record<string, unknown>) => {
      const answer = await runner.run(name, args as never, call);
      return { content: [{ type: "text" as const, text: answer.text }], ...(answer.error ? { isError: true } : {}) };
    });
  }

  const description = `A conversation of this scope: its last ${LISTED} messages, each with its position (read_conversation pages further back).`;
  server.registerResource(
    "conversation",
    // Listed below, a page at a time: the SDK's own listing of a template takes no cursor.
    new ResourceTemplate(CONVERSATION_URI, { list: undefined }),
    { description, mimeType: "text/plain" },
    async (uri, variables) => {
      const conversation = decodeURIComponent(String(variables.conversation));
      const answer = await runner.run("read_conversation", { conversation, limit: LISTED }, call);
      if (answer.error) throw new MemoriaError("INVALID_ARGUMENT", answer.text.replace(/^Error: /, ""));
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: answer.text }] };
    },
  );
  // The scope's conversations, LISTED a page, each page's `nextCursor` the store's own cursor.
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const page = await options.store.list(scope, { limit: LISTED, cursor: request.params?.cursor }).catch((error: unknown) => {
      if (MemoriaError.hasCode(error, "INVALID_ARGUMENT")) throw new McpError(ErrorCode.InvalidParams, (error as Error).message);
      throw error;
    });
    const resources = page.sessions.map((key) => ({
      uri: conversationUri(encodeSessionKey(key)),
      name: encodeSessionKey(key),
      description,
      mimeType: "text/plain",
    }));
    return { resources, ...(page.cursor ? { nextCursor: page.cursor } : {}) };
  });
  return server;
}

/** The resource address of a conversation (its encoded key). */
export function conversationUri(encoded: string): string {
  return CONVERSATION_URI.replace("{conversation}", encodeURIComponent(encoded));
}
