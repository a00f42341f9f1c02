/**
 * Every TypeScript block of README.md, docs/ and the package READMEs, as a reader
 * would paste it: each becomes a module in docs/.blocks with the names it uses
 * from docs/preamble.ts in scope; all of them are type-checked together with the
 * repository's compiler options; every block not marked `check` or `fragment`
 * then runs with tsx in an empty folder, its model answering through the real
 * ChatOpenAI client from a local server that speaks the OpenAI protocol.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { type OpenAICompatibleServer, startOpenAICompatibleServer } from "@memoria/testkit/servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CodeBlock, HEADER_LINES, blockFileName, blockModule, codeBlocks, markdownFiles, preambleNames, root } from "./code-blocks.js";

const docs = join(root, "docs");
const generated = join(docs, ".blocks");
const blocks: CodeBlock[] = markdownFiles().flatMap(codeBlocks);
const names = preambleNames();
const label = (block: CodeBlock) => `${block.file}:${block.line} (${block.mode})`;
/** Compiler errors by generated file name, each as "file.md:line: message". */
const errors = new Map<string, string[]>();
let server: OpenAICompatibleServer;
const work = mkdtempSync(join(tmpdir(), "memoria-docs-"));
/** tsx's loader, by path: the blocks run from an empty folder, where `--import tsx` would not be found. */
const tsx = pathToFileURL(join(docs, "node_modules", "tsx", "dist", "loader.mjs")).href;

beforeAll(async () => {
  rmSync(generated, { recursive: true, force: true });
  mkdirSync(generated, { recursive: true });
  for (const block of blocks) if (block.mode !== "fragment") writeFileSync(join(generated, blockFileName(block)), blockModule(block, names));
  const byFile = new Map(blocks.map((block) => [blockFileName(block), block]));
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const output = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.blocks.json", "--pretty", "false"], {
    cwd: docs,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  for (const match of output.matchAll(/^\.blocks\/(\S+?)\((\d+),\d+\): (.*)$/gm)) {
    const [, file = "", line = "0", message = ""] = match;
    const block = byFile.get(file);
    const where = block ? `${block.file}:${block.line + Number(line) - 1 - HEADER_LINES}` : file;
    errors.set(file, [...(errors.get(file) ?? []), `${where}: ${message}`]);
  }
  // Anything else the compiler said (the preamble, a config error) fails every block.
  const other = output.split("\n").filter((line) => line.trim() && !line.startsWith(".blocks/") && !line.startsWith(" "));
  if (other.length > 0) throw new Error(`tsc:\n${other.join("\n")}`);
  server = await startOpenAICompatibleServer(
    (request) => {
      const last = request.messages.at(-1);
      return { content: `You said: ${typeof last?.content === "string" ? last.content : JSON.stringify(last?.content)}` };
    },
    { embed: (texts) => texts.map((text) => [text.length, 1, 0]) },
  );
}, 300_000);

afterAll(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe("code blocks in the documentation", () => {
  it("finds the blocks of every page, and each fragment says that it is one", () => {
    expect(blocks.length).toBeGreaterThan(30);
    for (const block of blocks.filter((b) => b.mode === "fragment")) expect(block.code.split("\n")[0], label(block)).toMatch(/^\/\/.*fragment/i);
  });

  it.each(blocks.filter((block) => block.mode !== "fragment").map((block) => [label(block), block] as const))("%s type-checks", (_label, block) => {
    expect(errors.get(blockFileName(block)) ?? []).toEqual([]);
  });

  it.each(blocks.filter((block) => block.mode === "run").map((block) => [label(block), block] as const))(
    "%s runs",
    async (_label, block) => {
      const folder = mkdtempSync(join(work, "block-"));
      const result = await promisify(execFile)(process.execPath, ["--import", tsx, join(generated, blockFileName(block))], {
        cwd: folder,
        env: { PATH: process.env.PATH, OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "docs-test" },
        timeout: 60_000,
      }).catch((error: { code?: number; stdout?: string; stderr?: string }) => error);
      expect((result as { code?: number }).code ?? 0, (result as { stderr?: string }).stderr).toBe(0);
    },
    90_000,
  );
});
