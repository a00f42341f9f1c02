/**
 * The packages as a user gets them from a registry: packed with `pnpm pack` (which
 * turns workspace ranges into versions), linted with publint and arethetypeswrong,
 * then installed with npm into a fresh project outside the workspace: first the
 * `memoria` command with one store and its driver (it lists what two turns stored,
 * serves its studio page, and names what another URL would need), then every
 * package, where two turns run on createSqliteStore from ESM, CommonJS and
 * TypeScript (node16 and bundler resolution).
 */
import { execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..", "..");
const fixtures = join(import.meta.dirname, "..", "fixtures");
const published = readdirSync(join(root, "packages")).filter((dir) => !JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")).private);
const work = mkdtempSync(join(tmpdir(), "memoria-packaging-"));
const tarballs = join(work, "tarballs");
const project = join(work, "project");
const tarballOf = (dir: string) => join(tarballs, readdirSync(tarballs).find((f) => f.startsWith(`memoria-${dir}-`)) as string);

/**
 * The environment of a user's shell: without NODE_PATH, which pnpm sets for the
 * scripts it runs and through which `require` would find the workspace's packages.
 */
const { NODE_PATH: _workspace, ...userEnv } = process.env;

/** Runs a command without blocking the test worker (an npm install takes minutes). */
async function run(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...userEnv, npm_config_update_notifier: "false" },
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout ?? ""}\n${stderr ?? ""}`);
  }
}

beforeAll(async () => {
  await run("node", [join(root, "scripts", "pack-all.mjs"), "--out", tarballs], root);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the packed packages", () => {
  it.each(published)("@memoria/%s: a manifest without workspace ranges, with dist, README and LICENSE, and no source maps", async (dir) => {
    const files = (await run("tar", ["-tzf", tarballOf(dir)], work)).split("\n");
    expect(files.filter((file) => file.endsWith(".map"))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        "package/package.json",
        "package/README.md",
        "package/LICENSE",
        "package/dist/index.js",
        "package/dist/index.cjs",
        "package/dist/index.d.ts",
        "package/dist/index.d.cts",
      ]),
    );
    const manifest = await run("tar", ["-xzOf", tarballOf(dir), "package/package.json"], work);
    expect(manifest).not.toContain("workspace:");
  });

  it.each(published)("@memoria/%s: publint and arethetypeswrong report nothing", async (dir) => {
    expect(await run("npx", ["--no-install", "publint", "--strict"], join(root, "packages", dir))).toContain("All good!");
    // Exits non-zero on any problem, for node10, node16 (CJS and ESM) and bundler resolution.
    expect(await run("npx", ["--no-install", "attw", "--format", "table-flipped", tarballOf(dir)], root)).toContain("No problems found");
  });
});

/** Kilobytes on disk and packages under `node_modules` of `dir`. */
async function installSize(dir: string): Promise<{ kilobytes: number; packages: number }> {
  const kilobytes = Number((await run("du", ["-sk", "node_modules"], dir)).split("\t")[0]);
  // Every installed folder, nested ones too, once; the first line is the project.
  const paths = new Set((await run("npm", ["ls", "--all", "--parseable"], dir)).trim().split("\n"));
  return { kilobytes, packages: paths.size - 1 };
}

describe("installed with npm into a fresh project", () => {
  beforeAll(async () => {
    cpSync(fixtures, project, { recursive: true });
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fresh-app", version: "1.0.0", private: true }));
    // The command and one store with its driver: the stores are optional peers of @memoria/cli.
    const commandAlone = ["cli", "core", "file", "memory", "privacy", "recall", "sql"].map(tarballOf);
    await run("npm", ["install", "--no-audit", "--no-fund", ...commandAlone, "@langchain/core@^1.1.0", "better-sqlite3@^12.4.1"], project);
  });

  it("runs the memoria command with only the store it is given installed, and names what another URL needs", async () => {
    const size = await installSize(project);
    console.log(`@memoria/cli with @memoria/sql and better-sqlite3: ${size.packages} packages, ${(size.kilobytes / 1024).toFixed(1)} MiB in node_modules`);
    await run("node", ["two-turns.mjs", join(project, "cli.db")], project);
    const listed = (await run("npx", ["--no-install", "memoria", "sessions", "--store", "sqlite:cli.db", "--json"], project)).trim().split("\n");
    expect(listed.map((line) => JSON.parse(line).messageCount)).toEqual([4]);
    // A URL whose store is not installed, and one whose store is but not its driver (pg is an optional peer of @memoria/sql).
    const bin = join(project, "node_modules", ".bin", "memoria");
    const refusal = (url: string) =>
      promisify(execFile)(process.execPath, [bin, "sessions", "--store", url], { cwd: project, env: userEnv }).catch(
        (error: { code: number; stderr: string }) => error,
      );
    expect(await refusal("redis://127.0.0.1:1")).toMatchObject({
      code: 2,
      stderr:
        "memoria: a redis:// URL needs @memoria/redis and ioredis beside @memoria/cli, and @memoria/redis and ioredis are not installed: npm install @memoria/redis ioredis\n",
    });
    expect(await refusal("postgres://127.0.0.1:1/app")).toMatchObject({
      code: 2,
      stderr: "memoria: a postgres:// URL needs @memoria/sql and pg beside @memoria/cli, and pg is not installed: npm install @memoria/sql pg\n",
    });
  });

  it("serves memoria studio's page and its frontend from the installed package, offline", async () => {
    // node on the installed bin itself (not npx), so that stopping it stops the server.
    const bin = join(project, "node_modules", ".bin", "memoria");
    const child = spawn(process.execPath, [bin, "studio", "--store", "sqlite:cli.db"], { cwd: project, stdio: ["ignore", "pipe", "pipe"], env: userEnv });
    try {
      let output = "";
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL printed:\n${output}`)), 60_000);
        child.stderr.on("data", (chunk: Buffer) => {
          output += chunk.toString();
        });
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          const found = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(output)?.[0];
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        });
      });
      const token = new URL(url).searchParams.get("token") as string;
      for (const path of ["/", "/app.js", "/views.js", "/app.css", "/vendor/preact.js", "/vendor/hooks.js", "/vendor/htm.js"]) {
        const response = await fetch(new URL(path, url), { headers: { authorization: `Bearer ${token}` } });
        expect(response.status, path).toBe(200);
      }
    } finally {
      child.kill("SIGTERM");
    }
  });

  describe("with every package", () => {
    beforeAll(async () => {
      const rest = ["redis", "mongodb"].map(tarballOf);
      await run("npm", ["install", "--no-audit", "--no-fund", ...rest, "typescript@~5.9.3", "@types/node@^20.19.0"], project);
    });

    it("runs two turns from an ES module", async () => {
      expect((await run("node", ["two-turns.mjs", join(project, "esm.db")], project)).trim()).toBe("esm: saw 1, saw 3; MemoriaError");
    });

    it("runs two turns from CommonJS", async () => {
      expect((await run("node", ["two-turns.cjs", join(project, "cjs.db")], project)).trim()).toBe("cjs: saw 1, saw 3; MemoriaError");
    });

    it("keeps every exported class's name, in both module formats", async () => {
      expect((await run("node", ["class-names.mjs"], project)).trim()).toBe("all classes keep their names");
    });

    it("type-checks and runs with TypeScript's node16 resolution", async () => {
      await run("npx", ["--no-install", "tsc", "-p", "tsconfig.node16.json"], project);
      expect((await run("node", [join("out", "two-turns.mjs"), join(project, "ts.db")], project)).trim()).toBe("ts: saw 1, saw 3; MemoriaError");
    });

    it("type-checks with TypeScript's bundler resolution", async () => {
      expect(await run("npx", ["--no-install", "tsc", "-p", "tsconfig.bundler.json"], project)).toBe("");
    });
  });
});
