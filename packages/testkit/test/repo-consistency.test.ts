/**
 * Keeps the packages alike: every store package exports its factory and options
 * type, declares the @langchain/core peer, runs the testkit from its own tests,
 * and documents itself with the standard README sections; every package shares
 * one manifest shape.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const packages = join(import.meta.dirname, "..", "..");
const STORES: Record<string, string[]> = {
  file: ["createFileStore", "FileStoreOptions"],
  sql: ["createSqliteStore", "SqliteStoreOptions", "createPostgresStore", "PostgresStoreOptions"],
  redis: ["createRedisStore", "RedisStoreOptions"],
  mongodb: ["createMongoStore", "MongoStoreOptions"],
};
const README_SECTIONS = ["## Install", "## Usage", "## Options", "## Capabilities", "## Limits", "## Verified against"];

const read = (...parts: string[]) => readFileSync(join(packages, ...parts), "utf8");
const manifest = (name: string) => JSON.parse(read(name, "package.json"));

describe("repository consistency", () => {
  it("knows every store package there is", () => {
    const dirs = readdirSync(packages).filter((d) => existsSync(join(packages, d, "package.json")));
    const stores = dirs.filter((d) => /create\w+Store/.test(read(d, "src", "index.ts")) && d !== "core");
    expect(stores.sort()).toEqual(Object.keys(STORES).sort());
  });

  it.each(Object.entries(STORES))("%s exports its factories and options types", (dir, names) => {
    const index = read(dir, "src", "index.ts");
    for (const name of names) expect(index).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it.each(Object.keys(STORES))("%s declares @langchain/core as a peer and its client as a peer", (dir) => {
    const pkg = manifest(dir);
    expect(pkg.peerDependencies["@langchain/core"]).toBeDefined();
    expect(pkg.dependencies?.["@langchain/core"]).toBeUndefined();
    for (const client of ["ioredis", "pg", "better-sqlite3", "mongodb"]) expect(pkg.dependencies?.[client]).toBeUndefined();
  });

  it.each(Object.keys(STORES))("%s runs the conformance suite from its own tests", (dir) => {
    const tests = readdirSync(join(packages, dir, "test")).filter((f) => f.endsWith(".test.ts"));
    expect(tests.some((f) => read(dir, "test", f).includes("runHistoryStoreSuite("))).toBe(true);
  });

  it.each(Object.keys(STORES))("%s has a README with the standard sections", (dir) => {
    const readme = read(dir, "README.md");
    for (const section of README_SECTIONS) expect(readme).toContain(section);
  });

  it("gives every package one manifest shape: ESM and CommonJS with types first, only dist, no side effects", () => {
    for (const dir of readdirSync(packages).filter((d) => existsSync(join(packages, d, "package.json")))) {
      const pkg = manifest(dir);
      expect(pkg.type, dir).toBe("module");
      expect(pkg.sideEffects, dir).toBe(false);
      expect(pkg.files, dir).toEqual(["dist"]);
      expect(pkg.engines?.node, dir).toBe(">=20");
      expect(Object.keys(pkg.exports["."].import), dir).toEqual(["types", "default"]);
      expect(Object.keys(pkg.exports["."].require), dir).toEqual(["types", "default"]);
      expect(pkg.peerDependencies["@langchain/core"], dir).toBe("^1.0.0");
    }
  });

  it("names every published package in docs/releasing.md", () => {
    const releasing = read("..", "docs", "releasing.md");
    for (const dir of readdirSync(packages).filter((d) => existsSync(join(packages, d, "package.json")))) {
      if (!manifest(dir).private) expect(releasing, dir).toContain(`\`${manifest(dir).name}\``);
    }
  });

  it("ships the root LICENSE (MIT) in every package, which npm packs whatever `files` says", () => {
    const license = read("..", "LICENSE");
    expect(license).toMatch(/^MIT License/);
    for (const dir of readdirSync(packages).filter((d) => existsSync(join(packages, d, "package.json")))) {
      expect(manifest(dir).license, dir).toBe("MIT");
      expect(read(dir, "LICENSE"), dir).toBe(license);
    }
  });
});
