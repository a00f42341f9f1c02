/**
 * Each door as a new user installs it before the packages are on a registry: the
 * install line of its docs page, given to `pnpm pack:all`, whose printed npm command
 * installs into a fresh project outside the workspace, on this machine's Node.js (20).
 * Each door then runs once against a local server speaking the OpenAI protocol, and a
 * second `npm install` in the project still succeeds.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@memoria/testkit/servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");
const fixtures = join(import.meta.dirname, "..", "fixtures", "doors");
const packAll = join(root, "scripts", "pack-all.mjs");
const work = mkdtempSync(join(tmpdir(), "memoria-doors-"));
const tarballs = join(work, "tarballs");
let model: OpenAICompatibleServer;

/** A user's shell: without the NODE_PATH pnpm sets for its scripts, through which `require` would find the workspace. */
const { NODE_PATH: _workspace, ...userEnv } = process.env;

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  try {
    return await promisify(execFile)(command, args, {
      cwd,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...userEnv, npm_config_update_notifier: "false", ...env },
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout ?? ""}\n${stderr ?? ""}`);
  }
}

/** The packages of the first `pnpm add` line of a docs page that names `first` first. */
function installLine(page: string, first: string): string[] {
  const line = readFileSync(join(root, "docs", page), "utf8")
    .split("\n")
    .find((text) => text.startsWith(`pnpm add ${first} `));
  if (!line) throw new Error(`docs/${page} has no "pnpm add ${first} …" line`);
  return line.slice("pnpm add ".length).trim().split(/\s+/);
}

beforeAll(async () => {
  await run("node", [packAll, "--out", tarballs], root);
  // Each answer says how many messages the model was given: a second turn that saw the first says more.
  model = await startOpenAICompatibleServer((request) => ({ content: `saw ${request.messages.length}` }));
});
afterAll(async () => {
  await model?.stop();
  rmSync(work, { recursive: true, force: true });
});

const doors = [
  { door: "a chain", page: "getting-started.md", first: "@memoria/core", script: "chain.mjs", says: "chain: saw 2, saw 4" },
  { door: "createAgent with MemoriaSaver", page: "langgraph.md", first: "@memoria/langgraph", script: "agent.mjs", says: "agent: saw 1, saw 3; 4 stored" },
  // ai v7 declares Node.js 22: npm says so once, as docs/ai-sdk.md tells, and installs it.
  {
    door: "the AI SDK",
    page: "ai-sdk.md",
    first: "@memoria/ai-sdk",
    script: "ai-sdk.mjs",
    says: "ai-sdk: one, saw 1, two, saw 3",
    warns: /EBADENGINE[\s\S]*'ai@7/,
  },
  {
    door: "memoria mcp",
    page: "agent-memory.md",
    first: "@memoria/cli",
    script: "mcp.mjs",
    says: "mcp: forget read_conversation remember search_memory update_profile; found",
  },
];

describe("each door, installed from its docs' line with npm on Node.js 20", () => {
  it.each(doors)("$door ($page)", async ({ page, first, script, says, warns }: (typeof doors)[number] & { warns?: RegExp }) => {
    const project = join(work, script.replace(".mjs", ""));
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fresh-app", version: "1.0.0", private: true, type: "module" }));
    copyFileSync(join(fixtures, script), join(project, script));
    const printed = (await run("node", [packAll, "--out", tarballs, "--packed", ...installLine(page, first)], root)).stdout.trim().split(" ");
    expect(printed.slice(0, 2)).toEqual(["npm", "install"]);
    const install = await run("npm", [...printed.slice(1), "--no-audit", "--no-fund"], project);
    if (warns) expect(install.stderr).toMatch(warns);
    // What broke an AI SDK project: a later install refused with ERESOLVE.
    await run("npm", ["install", "--no-audit", "--no-fund"], project);
    const { stdout } = await run("node", [script, join(project, "door.db")], project, { MODEL_URL: model.baseURL });
    expect(stdout.trim()).toBe(says);
  });
});
