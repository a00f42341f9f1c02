#!/usr/bin/env node
// Installing memoria before its packages are on a registry: packs every published
// package (built first by `pnpm pack:all`) into one folder with `pnpm pack`, which turns
// workspace ranges into versions, and prints the npm command that installs them.
//
//   pnpm pack:all [--out DIR] [--packed] [package …]
//
// --packed prints the command for tarballs packed before, without packing again.
//
// Given the packages of a docs page's install line, the command installs their
// tarballs with the tarballs of the @memoria packages they need (npm would look for
// those on the registry otherwise), and the other packages as named. Given none, it
// installs every package but the test kit.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = resolve(outAt === -1 ? join(root, "packed") : (args[outAt + 1] ?? ""));
const packed = args.includes("--packed");
const asked = args.filter((arg, i) => arg !== "--packed" && (outAt === -1 || (i !== outAt && i !== outAt + 1)));

/** The published packages, by name: their folder, and the @memoria packages they cannot go without. */
const packages = new Map(
  readdirSync(join(root, "packages"))
    .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) }))
    .filter(({ json }) => !json.private)
    .map(({ dir, json }) => {
      const optional = new Set(Object.keys(json.peerDependenciesMeta ?? {}).filter((name) => json.peerDependenciesMeta[name].optional));
      const needs = Object.keys({ ...json.dependencies, ...json.peerDependencies }).filter((name) => name.startsWith("@memoria/") && !optional.has(name));
      return [json.name, { dir, version: json.version, needs }];
    }),
);

const unknown = asked.filter((name) => name.startsWith("@memoria/") && !packages.has(name));
if (unknown.length > 0) {
  console.error(`pack-all: no published package named ${unknown.join(", ")}; there are ${[...packages.keys()].join(", ")}`);
  process.exit(2);
}

mkdirSync(out, { recursive: true });
for (const [name, { dir }] of packed ? [] : packages) {
  execFileSync("pnpm", ["pack", "--pack-destination", out], { cwd: join(root, "packages", dir), stdio: ["ignore", "ignore", "inherit"] });
  console.error(`packed ${name}`);
}

const wanted = asked.length > 0 ? asked.filter((name) => packages.has(name)) : [...packages.keys()].filter((name) => name !== "@memoria/testkit");
const closure = new Set();
const add = (name) => {
  if (closure.has(name)) return;
  closure.add(name);
  for (const need of packages.get(name).needs) add(need);
};
for (const name of wanted) add(name);

// Absolute paths: the command is run in the user's project, elsewhere.
const tarballOf = (name) => join(out, `${name.slice(1).replace("/", "-")}-${packages.get(name).version}.tgz`);
const others = asked.filter((name) => !name.startsWith("@memoria/"));
console.log(["npm", "install", ...[...closure].sort().map(tarballOf), ...others].join(" "));
