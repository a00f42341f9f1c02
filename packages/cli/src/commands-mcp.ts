import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { SessionKeyFilter } from "@memoria/core";
import type { Command } from "commander";
import { UsageError } from "./cli-error.js";
import { throughKeys } from "./encryption-keys.js";
import { MAX_MESSAGE_BYTES, type MessageTooLargeError, boundedLines } from "./mcp/bounded-lines.js";
import { bearerScope, startMcpHttp } from "./mcp/mcp-http.js";
import { loadSdk, memoriaMcpServer } from "./mcp/mcp-server.js";
import { collect, positive, storeOptions } from "./options.js";
import { pairsFilter } from "./session-arg.js";
import { openStore } from "./store-url.js";

/** `--scope field=value` (repeatable) as the one scope the server serves. */
function parseScope(pairs: readonly string[] | undefined): SessionKeyFilter {
  if (!pairs?.length) throw new UsageError("memoria mcp serves one user's memory: name it with --scope, e.g. --scope userId=ada.");
  return pairsFilter("--scope", pairs);
}

/** The bearer token for HTTP: from --token-file or MEMORIA_MCP_TOKEN, else a fresh one (printed once, on stderr). */
function bearerToken(file: string | undefined): { token: string; generated: boolean } {
  const given = file !== undefined ? readFileSync(file, "utf8").trim() : process.env.MEMORIA_MCP_TOKEN?.trim();
  if (given !== undefined) {
    if (given.length < 16) throw new UsageError("The MCP bearer token must be at least 16 characters.");
    return { token: given, generated: false };
  }
  return { token: randomBytes(24).toString("base64url"), generated: true };
}

/** `mcp`: memoria's memory tools for MCP clients, over stdio (the default) or streamable HTTP. */
export function mcpCommand(program: Command, version: string): void {
  storeOptions(
    program
      .command("mcp")
      .description(
        "serve one user's memory to MCP clients (tools: search_memory, remember, update_profile, forget, read_conversation; conversations as resources)",
      ),
  )
    .option("--scope <field=value>", "the one scope served, e.g. userId=ada (repeatable for several fields)", collect)
    .option("--http <port>", "serve streamable HTTP on 127.0.0.1:<port> (0: a free one) instead of stdio; requires a bearer token")
    .option("--token-file <file>", "the bearer token for --http (else MEMORIA_MCP_TOKEN, else a fresh one printed on stderr)")
    .option("--forget <how>", "what forget does: withdraw (closed, kept for audit) or erase", "withdraw")
    .action(async (options) => {
      const scope = parseScope(options.scope);
      if (options.forget !== "withdraw" && options.forget !== "erase")
        throw new UsageError(`--forget takes withdraw or erase, got ${JSON.stringify(options.forget)}.`);
      const port = options.http === undefined ? undefined : options.http === "0" ? 0 : positive("--http", options.http);
      if (port !== undefined && port > 65_535) throw new UsageError(`--http takes 0 to 65535, got ${port}.`);
      const bearer = port === undefined ? undefined : bearerToken(options.tokenFile);
      const { StdioServerTransport } = await loadSdk(); // a missing SDK is said before the store is opened
      // A memory server writes (remember, update_profile): its first start makes the store, as an app's first turn does.
      const opened = await openStore(options.store, { create: true });
      const store = await throughKeys(opened.store, options.keys);
      const served = { store, forget: options.forget as "withdraw" | "erase", version };
      const stopped = new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      if (port === undefined) {
        // stdout is the protocol's channel: nothing else is written there.
        const server = await memoriaMcpServer({ ...served, scope });
        let tooLong: MessageTooLargeError | undefined;
        const input = process.stdin.pipe(
          boundedLines(MAX_MESSAGE_BYTES, (error) => {
            tooLong = error;
            process.stdin.unpipe(input);
            process.stdin.destroy();
            void transport.close();
          }),
        );
        const transport = new StdioServerTransport(input, process.stdout);
        const closed = new Promise<void>((resolve) => {
          transport.onclose = resolve;
          process.stdin.once("end", resolve);
        });
        await server.connect(transport);
        process.stderr.write(`memoria mcp: serving ${JSON.stringify(scope)} from ${opened.label} over stdio\n`);
        await Promise.race([closed, stopped]);
        await server.close();
        if (tooLong) {
          await store.close();
          throw tooLong;
        }
      } else {
        const { token, generated } = bearer as { token: string; generated: boolean };
        const http = await startMcpHttp({ ...served, port, scopeOf: bearerScope(token, scope) });
        process.stderr.write(`memoria mcp: serving ${JSON.stringify(scope)} from ${opened.label} at ${http.url}\n`);
        if (generated) process.stderr.write(`bearer token: ${token}\n`);
        await stopped;
        await http.close();
      }
      await store.close();
    });
}
