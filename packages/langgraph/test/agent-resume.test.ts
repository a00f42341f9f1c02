import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@memoria/testkit/servers";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const apps = [
  { app: "createAgent with humanInTheLoopMiddleware", script: join(import.meta.dirname, "fixtures/approval-agent.ts") },
  { app: "hand-built StateGraph with interrupt()", script: join(import.meta.dirname, "fixtures/approval-graph.ts") },
];
const cliBin = join(import.meta.dirname, "../../cli/dist/bin.js");
let model: OpenAICompatibleServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "memoria-langgraph-agent-"));
  // Asked once, the model calls send_email; shown the tool's result, it answers.
  model = await startOpenAICompatibleServer((request) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === "tool") return { content: "Done: I emailed Bob." };
    return { toolCalls: [{ id: "call_1", name: "send_email", arguments: JSON.stringify({ to: "bob@example.com", body: "The report is ready." }) }] };
  });
});
afterAll(async () => {
  await model?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the app until its first line of output; the caller kills or awaits it. */
function runAgent(script: string, args: Record<string, string>): { child: ChildProcess; firstLine: Promise<string>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", script, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    void exited.then((code) => reject(new Error(`the agent exited (${code}) before answering: ${errors}`)));
  });
  return { child, firstLine, exited };
}

const stores = [
  { name: "SQLite", url: () => `sqlite:${join(dir, "agent.db")}`, cli: () => `sqlite:${join(dir, "agent.db")}` },
  { name: "PostgreSQL", url: () => inject("databaseUrl"), cli: () => inject("databaseUrl") },
];

describe.each(stores.flatMap((store) => apps.map((app) => ({ ...store, ...app }))))(
  "a thread of a $app on $name survives its process being killed at the approval",
  ({ url, cli, name, script }) => {
    it("resumes in a new process, runs the approved tool once, and memoria show prints the thread", { timeout: 120_000 }, async () => {
      const threadId = `approval-${name.toLowerCase()}-${script.includes("graph") ? "graph" : "agent"}-${Date.now()}`;
      const outbox = join(dir, `${threadId}.outbox`);
      const common = { store: url(), baseURL: model.baseURL, threadId, outbox };

      const first = runAgent(script, { ...common, phase: "start" });
      expect(JSON.parse(await first.firstLine)).toEqual({ interrupted: true });
      first.child.kill("SIGKILL");
      await first.exited;
      expect(() => readFileSync(outbox)).toThrow();

      const second = runAgent(script, { ...common, phase: "resume" });
      const { messages } = JSON.parse(await second.firstLine) as { messages: { type: string; content: unknown }[] };
      expect(await second.exited).toBe(0);
      expect(messages.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
      expect(messages[3]?.content).toBe("Done: I emailed Bob.");
      const sent = readFileSync(outbox, "utf8").trim().split("\n");
      expect(sent).toHaveLength(1);
      expect(JSON.parse(sent[0] as string).pid).toBe(second.child.pid);

      const { stdout } = await promisify(execFile)(process.execPath, [cliBin, "show", "--store", cli(), `threadId=${threadId}`]);
      expect(stdout).toContain("Email Bob that the report is ready");
      expect(stdout).toContain("send_email");
      expect(stdout).toContain("Done: I emailed Bob.");
    });
  },
);
