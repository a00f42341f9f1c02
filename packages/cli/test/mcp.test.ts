import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type ClientRequest, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { readFacts } from "@memoria/memory/long-term";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startMcpHttp } from "../src/mcp/mcp-http.js";
import { openStore } from "../src/store-url.js";

const BIN = join(import.meta.dirname, "..", "src", "bin.ts");
const dir = mkdtempSync(join(tmpdir(), "memoria-mcp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const URLS: [string, () => string][] = [
  ["sqlite", () => `sqlite:${join(dir, `mcp-${++n}.db`)}`],
  ["redis", () => `${inject("redisUrl")}?prefix=mcp:${process.pid}:${++n}:`],
];

/** Ada's and Bob's conversations, written through the store as an app would. */
async function seed(url: string): Promise<void> {
  const { store } = await openStore(url, { create: true });
  await store.append({ userId: "ada", conversationId: "trip" }, [new HumanMessage("We fly to Lisbon on Friday"), new AIMessage("Have a good trip!")]);
  await store.append({ userId: "bob", conversationId: "secret" }, [new HumanMessage("bob's password is hunter2")]);
  await store.close();
}

const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((part) => part.text).join("\n");
const isError = (result: unknown) => (result as { isError?: boolean }).isError === true;

/** Every tool, a bad argument, and another user's conversation, as a client sees them. */
async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(["search_memory", "remember", "update_profile", "forget", "read_conversation"]);
  expect(tools.find((tool) => tool.name === "forget")?.inputSchema).toMatchObject({ type: "object", properties: { id: { type: "string" } }, required: ["id"] });

  const remembered = await client.callTool({ name: "remember", arguments: { subject: "Ada", statement: "Ada flies to Lisbon on Friday" } });
  expect(text(remembered)).toContain("[f1] Ada flies to Lisbon on Friday");
  expect(text(await client.callTool({ name: "search_memory", arguments: { query: "Lisbon" } }))).toContain('<memory kind="facts">');
  expect(text(await client.callTool({ name: "update_profile", arguments: { field: "home", value: "Porto" } }))).toContain("home: Porto");
  const page = await client.callTool({ name: "read_conversation", arguments: { conversation: "conversationId=trip&userId=ada" } });
  expect(text(page)).toContain("[0] Human: We fly to Lisbon on Friday");

  // Another user's conversation, a bad id, a schema violation: error results, nothing read or written.
  const other = await client.callTool({ name: "read_conversation", arguments: { conversation: "conversationId=secret&userId=bob" } });
  expect(isError(other)).toBe(true);
  expect(text(other)).not.toContain("hunter2");
  expect(isError(await client.callTool({ name: "forget", arguments: { id: "f9" } }))).toBe(true);
  const invalid = await client.callTool({ name: "forget", arguments: { id: "everything" } });
  expect(isError(invalid)).toBe(true);
  expect(text(invalid)).toBe('MCP error -32602: Input validation error: Invalid arguments for tool forget: a fact id looks like "f3" at id');
  expect(text(await client.callTool({ name: "forget", arguments: { id: "f1" } }))).toContain("Withdrew fact f1");

  // Conversations as resources: the scope's own only.
  const { resources } = await client.listResources();
  expect(resources.map((resource) => resource.name)).toEqual(["conversationId=trip&userId=ada"]);
  const read = await client.readResource({ uri: resources[0]!.uri });
  expect((read.contents[0] as { text: string }).text).toContain("Have a good trip!");
  await expect(client.readResource({ uri: "memoria://conversation/conversationId%3Dsecret%26userId%3Dbob" })).rejects.toThrow(
    /not one of this user's conversations/,
  );
}

describe.each(URLS)("memoria mcp on %s", (_name, makeUrl) => {
  it("over stdio: the SDK's client lists and calls every tool, bound to --scope", { timeout: 120_000 }, async () => {
    const url = makeUrl();
    await seed(url);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", BIN, "mcp", "--store", url, "--scope", "userId=ada"],
      env: { ...process.env } as Record<string, string>,
      stderr: "pipe",
    });
    const client = new Client({ name: "memoria-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
    const { store } = await openStore(url);
    expect(await readFacts(store, { userId: "ada" })).toMatchObject([{ id: "f1", withdrawn: expect.any(String) }]);
    expect(await readFacts(store, { userId: "bob" })).toEqual([]);
    await store.close();
  });

  it("over HTTP: needs the bearer token and the server's own Host; then the same tools", { timeout: 120_000 }, async () => {
    const url = makeUrl();
    await seed(url);
    const tokenFile = join(dir, `token-${n}`);
    const token = "t0ken-for-the-mcp-test-0123456789";
    writeFileSync(tokenFile, `${token}\n`);
    const server = await startHttp(["mcp", "--store", url, "--scope", "userId=ada", "--http", "0", "--token-file", tokenFile]);
    try {
      const endpoint = new URL(server.url);
      // No token, a wrong one: refused before anything is read.
      for (const headers of [{}, { Authorization: "Bearer wrong-token-wrong-token-wrong" }] as Record<string, string>[]) {
        const client = new Client({ name: "memoria-test", version: "1.0.0" });
        await expect(client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }))).rejects.toThrow(/401|bearer token/i);
      }
      expect(await post(endpoint, { authorization: `Bearer ${token}`, host: "evil.example:80" })).toBe(403);
      const client = new Client({ name: "memoria-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      try {
        await exercise(client);
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe("memoria mcp refuses what cannot work", () => {
  it("needs --scope, and a token of 16 characters or more", { timeout: 60_000 }, async () => {
    const url = `sqlite:${join(dir, "refuse.db")}`;
    const noScope = await run(["mcp", "--store", url]);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toContain("name it with --scope, e.g. --scope userId=ada");
    const shortToken = await run(["mcp", "--store", url, "--scope", "userId=ada", "--http", "0"], { MEMORIA_MCP_TOKEN: "short" });
    expect(shortToken.stderr).toContain("at least 16 characters");
  });
});

describe("memoria mcp, hardened", () => {
  it("refuses a --scope that names a field twice, rather than serving the last", { timeout: 60_000 }, async () => {
    const twice = await run(["mcp", "--store", `sqlite:${join(dir, "twice.db")}`, "--scope", "userId=alice", "--scope", "userId=bob"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr.trim().split("\n")).toEqual(['memoria: --scope names userId twice ("alice" and "bob"): give each field once.']);
  });

  it("over stdio: a message past 4 MiB is a typed error on stderr and a non-zero exit, nothing served after it", { timeout: 60_000 }, async () => {
    const url = `sqlite:${join(dir, "long-line.db")}`;
    await seed(url);
    const huge = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(11 * 1024 * 1024) } })}\n`;
    const result = await run(["mcp", "--store", url, "--scope", "userId=ada"], {}, huge);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/memoria: A message on stdin ran past 4194304 bytes .* \(INVALID_INPUT\)\n$/);
  });

  it("over HTTP: a failing scopeOf reaches the log, not the client; GET opens no stream; Origin is checked; a caller's open requests are capped", {
    timeout: 60_000,
  }, async () => {
    const { store } = await openStore(`sqlite:${join(dir, "hardened.db")}`, { create: true });
    const logged: unknown[] = [];
    const token = "Bearer a-token-of-enough-length";
    let asked = 0; // requests the server has taken to scopeOf with the token
    const http = await startMcpHttp({
      store,
      maxOpenPerCaller: 3,
      origins: ["https://app.example"],
      onError: (error) => logged.push(error),
      scopeOf: (request) => {
        if (request.headers.authorization === "Bearer throw") throw new Error("connect postgres://admin:s3cret@db/prod failed");
        if (request.headers.authorization !== token) return undefined;
        asked += 1;
        return { userId: "ada" };
      },
    });
    try {
      const endpoint = new URL(http.url);
      const failed = await send(endpoint, "POST", { authorization: "Bearer throw" });
      expect(failed.status).toBe(500);
      expect(failed.body).not.toMatch(/s3cret|postgres|admin/);
      expect(logged.map((error) => (error as Error).message)).toEqual(["connect postgres://admin:s3cret@db/prod failed"]);

      expect((await send(endpoint, "GET", { authorization: token, accept: "text/event-stream" })).status).toBe(405);
      expect((await send(endpoint, "POST", { authorization: token, origin: "https://evil.example" })).status).toBe(403);
      expect((await send(endpoint, "POST", { authorization: token, origin: "https://app.example" })).status).toBe(200);
      expect((await send(endpoint, "POST", { authorization: token, origin: `http://${endpoint.host}` })).status).toBe(200);

      // Three requests whose bodies never end hold the caller's three places; a fourth waits its turn (429).
      const before = asked;
      const held = [0, 1, 2].map(() => holdOpen(endpoint, token));
      await until(() => asked === before + 3); // the server has taken all three in
      await new Promise((resolve) => setImmediate(resolve)); // and counted them
      expect((await send(endpoint, "POST", { authorization: token })).status).toBe(429);
      for (const request of held) request.destroy();
      // Once the server has seen a held request close, its place is free again.
      let status = 429;
      for (const deadline = Date.now() + 10_000; status === 429 && Date.now() < deadline; )
        status = (await send(endpoint, "POST", { authorization: token })).status;
      expect(status).toBe(200);
    } finally {
      await http.close();
      await store.close();
    }
  });
});

/** One request with the headers given (fetch will not send Origin or Host as given): its status and body. */
function send(endpoint: URL, method: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      { method, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(method === "POST" ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) : undefined);
  });
}

/** A POST whose body is begun and never ended. */
function holdOpen(endpoint: URL, token: string): ClientRequest {
  const req = request(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: token, "content-length": "1000" },
  });
  req.on("error", () => {});
  req.write('{"jsonrpc":"2.0",');
  return req;
}

/** Waits for `check` to hold, 10 s at most. */
async function until(check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check(); ) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the server");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function run(args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: [input === undefined ? "ignore" : "pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  if (input !== undefined) {
    child.stdin?.on("error", () => {}); // the server stops reading: the rest of the input has nowhere to go
    child.stdin?.end(input);
  }
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

/** `memoria mcp --http` as its own process, once it prints its URL. */
async function startHttp(args: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", BIN, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL in 60 s:\n${output}`)), 60_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const found = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(output)?.[0];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before printing its URL:\n${output}`));
    });
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** A POST with headers `fetch` will not send (Host): the status. */
function post(endpoint: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
  });
}

describe("memoria mcp lists every conversation of its scope", () => {
  const stores: [string, () => Promise<import("@memoria/core").HistoryStore>][] = [
    ["in-memory", async () => (await import("@memoria/core")).createInMemoryStore()],
    ["redis", async () => (await openStore(`${inject("redisUrl")}?prefix=mcp-pages:${process.pid}:`, { create: true })).store],
  ];
  it.for(stores)("on %s: a page of 100 at a time, each page's cursor leading to the next, none of another scope's, whatever the cursor", async ([, open]) => {
    const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
    const { memoriaMcpServer } = await import("../src/index.js");
    const store = await open();
    for (let i = 0; i < 250; i++) await store.append({ userId: "ada", conversationId: `c${String(i).padStart(3, "0")}` }, [new HumanMessage(`note ${i}`)]);
    await store.append({ userId: "bob", conversationId: "secret" }, [new HumanMessage("bob's")]);
    const server = await memoriaMcpServer({ store, scope: { userId: "ada" } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(clientSide);
    const ada = (name: string) => name.endsWith("&userId=ada");
    try {
      const names: string[] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listResources(cursor === undefined ? {} : { cursor });
        sizes.push(page.resources.length);
        names.push(...page.resources.map((resource) => resource.name));
        expect(page.resources.every((resource) => resource.mimeType === "text/plain" && resource.description?.startsWith("A conversation"))).toBe(true);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(sizes).toEqual([100, 100, 50]);
      expect(new Set(names).size).toBe(250);
      expect(names.every(ada)).toBe(true);
      const read = await client.readResource({ uri: `memoria://conversation/${encodeURIComponent(names[249] as string)}` });
      expect(JSON.stringify(read.contents)).toContain("note 249");
      // A cursor the client made up moves within the scope, or is refused as invalid params; it never reaches bob's.
      for (const forged of ["", "zzz", "conversationId=secret&userId=bob", "0"]) {
        const answer = await client.listResources({ cursor: forged }).catch((error: Error) => error);
        if (answer instanceof Error) expect(answer.message).toMatch(/-32602/);
        else expect(answer.resources.every((resource) => ada(resource.name))).toBe(true);
      }
    } finally {
      await client.close();
      await server.close();
      await store.close();
    }
  });
});
