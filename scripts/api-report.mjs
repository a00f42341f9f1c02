// The public surface of every package, one report per entry point in the package's
// api/ folder: each exported name with its kind, read from the entry's source by the
// TypeScript compiler. `pnpm api` writes the reports; `pnpm lint` runs this with
// --check, which fails on any difference, so a change to a public surface is seen in
// review (commit the report with it).
import { readFileSync, readdirSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ts = createRequire(import.meta.url)("typescript");
const check = process.argv.includes("--check");

/** A package's build entries, from its tsup.config.ts: output name (`servers/index`) → source file. */
function buildEntries(dir) {
  const text = readFileSync(join(dir, "tsup.config.ts"), "utf8");
  const named = [...text.matchAll(/"?([\w/-]+)"?\s*:\s*"(src\/[^"]+\.ts)"/g)].map((match) => [match[1], match[2]]);
  const listed = [...text.matchAll(/(?<![:\w]\s*)"(src\/[^"]+\.ts)"/g)].map((match) => [match[1].slice(4, -3), match[1]]);
  const sources = new Map(named.length > 0 ? named : listed);
  if (sources.size === 0) sources.set("index", "src/index.ts"); // packageBuild's default entry
  return sources;
}

/** Every package's entries: its export subpath, the source file that builds it, and where its report lives. */
function entries() {
  const found = [];
  for (const dir of readdirSync(join(root, "packages")).sort()) {
    const manifest = JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8"));
    const sources = buildEntries(join(root, "packages", dir));
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      const built = typeof target === "string" ? target : target?.import?.default;
      if (!built?.startsWith("./dist/")) continue;
      const stem = built.slice("./dist/".length).replace(/\.js$/, "");
      const source = sources.has(stem) ? join(root, "packages", dir, sources.get(stem)) : undefined;
      if (!source || !existsSync(source)) throw new Error(`${manifest.name}${subpath.slice(1)}: no build entry in tsup.config.ts makes ${built}`);
      const name = subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-");
      found.push({ title: `${manifest.name}${subpath.slice(1)}`, source, report: join(root, "packages", dir, "api", `${name}.api.txt`) });
    }
  }
  return found;
}

const KINDS = [
  [ts.SymbolFlags.Class, "class"],
  [ts.SymbolFlags.Function, "function"],
  [ts.SymbolFlags.Enum, "enum"],
  [ts.SymbolFlags.Variable, "const"],
  [ts.SymbolFlags.Interface, "interface"],
  [ts.SymbolFlags.TypeAlias, "type"],
  [ts.SymbolFlags.Module, "namespace"],
];

/** What an exported symbol is: a value's kind first (a class is also a type), then a type's. */
function kindOf(checker, symbol) {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const kinds = KINDS.filter(([flag]) => target.flags & flag).map(([, kind]) => kind);
  if (kinds.length === 0) return "unresolved";
  // A const and a type of one name (`const X` beside `type X`) are one export of both kinds.
  return [...new Set(kinds)].join(" + ");
}

function report(checker, file, title) {
  const module = checker.getSymbolAtLocation(file);
  const lines = (module ? checker.getExportsOfModule(module) : []).map((symbol) => `${kindOf(checker, symbol)} ${symbol.name}`);
  lines.sort((a, b) => {
    const [x, y] = [a.slice(a.lastIndexOf(" ") + 1), b.slice(b.lastIndexOf(" ") + 1)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return `# ${title}: ${lines.length} exports\n${lines.join("\n")}\n`;
}

const list = entries();
const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.base.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
const program = ts.createProgram(
  list.map((entry) => entry.source),
  { ...config.options, noEmit: true, skipLibCheck: true },
);
const checker = program.getTypeChecker();
const changed = [];
for (const entry of list) {
  const text = report(checker, program.getSourceFile(entry.source), entry.title);
  const before = existsSync(entry.report) ? readFileSync(entry.report, "utf8") : "";
  if (text.includes("\nunresolved ")) throw new Error(`${entry.title}: an export could not be resolved (build the packages it imports first):\n${text}`);
  if (text === before) continue;
  changed.push({ entry, text, before });
  if (!check) {
    mkdirSync(dirname(entry.report), { recursive: true });
    writeFileSync(entry.report, text);
  }
}
if (check && changed.length > 0) {
  for (const { entry, text, before } of changed) {
    const [old, now] = [new Set(before.split("\n").slice(1)), new Set(text.split("\n").slice(1))];
    const lines = [
      ...[...now].filter((line) => line && !old.has(line)).map((line) => `  + ${line}`),
      ...[...old].filter((line) => line && !now.has(line)).map((line) => `  - ${line}`),
    ];
    console.error(`${entry.title}: the public surface differs from ${relative(root, entry.report)}\n${lines.join("\n")}`);
  }
  console.error("Review the change, then run `pnpm api` and commit the reports with it.");
  process.exit(1);
}
console.log(check ? `api: ${list.length} entry points match their reports` : `api: ${changed.length} of ${list.length} reports written`);
