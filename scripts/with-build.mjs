// `node scripts/with-build.mjs <package> <script> [args…]`: builds what <script> needs,
// then runs it, passing the arguments on. A script in a package's `dist/` is built with
// that package and run by node; a `.ts` script is run by tsx once the package's
// dependencies are built. The build is quiet (its output is printed only if it fails)
// but says so when it takes more than a moment. The script runs in the repository's
// root; MEMORIA_CWD names the folder pnpm was started in, for paths the user typed (the
// memoria command resolves relative store paths there).
//
// Turbo is asked only when a build input of the packages involved (a file under `src/`,
// `package.json`, a build config, the lockfile) is newer than the last build this script
// ran, or a `dist/` is missing: asking costs a second even when nothing changed, and a
// warm `pnpm demo` should answer in about that.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [pkg, script, ...args] = process.argv.slice(2);

/** A child's exit as a process exit code: its own, or 128 + the signal's number when a signal ended it. */
const exitCodeOf = (code, signal) => code ?? 128 + ({ SIGINT: 2, SIGTERM: 15 }[signal] ?? 1);

/** Runs a command to its end: its exit code and, when captured, its output. */
function run(command, commandArgs, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, options);
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code: exitCodeOf(code, signal), output }));
  });
}

/** Every workspace package: name → folder and the workspace packages it depends on. */
function workspacePackages() {
  const folders = ["examples", "docs", "bench", "tests/packaging", ...readdirSync(join(root, "packages")).map((name) => `packages/${name}`)];
  const packages = new Map();
  for (const folder of folders) {
    const manifest = JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8"));
    const dependencies = { ...manifest.dependencies, ...manifest.devDependencies };
    packages.set(manifest.name, {
      folder,
      builds: manifest.scripts?.build !== undefined,
      uses: Object.keys(dependencies).filter((name) => String(dependencies[name]).startsWith("workspace:")),
    });
  }
  return packages;
}

/** The folders of the packages with a build that a build of `name` (with itself when `withSelf`) involves. */
function builtWith(packages, name, withSelf) {
  const seen = new Set();
  const visit = (current) => {
    for (const used of packages.get(current)?.uses ?? []) {
      if (!seen.has(used)) {
        seen.add(used);
        visit(used);
      }
    }
  };
  visit(name);
  if (withSelf) seen.add(name);
  return [...seen]
    .map((each) => packages.get(each))
    .filter((each) => each.builds)
    .map((each) => each.folder);
}

/** The newest modification time among a folder's build inputs (folders count too: a deleted file changes its folder's time); undefined without a `dist/`. */
function newestInput(folder) {
  let newest = 0;
  const consider = (path) => {
    try {
      newest = Math.max(newest, statSync(path).mtimeMs);
    } catch {}
  };
  const walk = (path) => {
    consider(path);
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(path, entry.name));
      else consider(join(path, entry.name));
    }
  };
  const packageRoot = join(root, folder);
  walk(join(packageRoot, "src"));
  for (const file of ["package.json", "tsup.config.ts", "tsconfig.json"]) consider(join(packageRoot, file));
  try {
    statSync(join(packageRoot, "dist"));
  } catch {
    return undefined;
  }
  return newest;
}

const ownDist = relative(root, script).split("/").includes("dist");
const filter = ownDist ? `${pkg}...` : `${pkg}^...`;
const stampFile = join(root, "node_modules/.cache/memoria/with-build.json");
const readStamps = () => {
  try {
    return JSON.parse(readFileSync(stampFile, "utf8"));
  } catch {
    return {};
  }
};
/** The newest build input of everything the filter builds, or undefined when a package has no build yet. */
function inputsTime() {
  const packages = workspacePackages();
  let newest = 0;
  for (const file of ["pnpm-lock.yaml", "tsup.base.ts", "tsconfig.base.json", "turbo.json"]) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  for (const folder of builtWith(packages, pkg, ownDist)) {
    const time = newestInput(folder);
    if (time === undefined) return undefined;
    newest = Math.max(newest, time);
  }
  return newest;
}

const before = inputsTime();
if (before === undefined || readStamps()[filter] !== before) {
  // A first build takes a minute or more: say so at once, rather than print nothing.
  const started = Date.now();
  const notice = setTimeout(
    () => process.stderr.write(`memoria: building the packages ${pkg.replace("@memoria/", "")} needs (a first run takes a minute or two)…\n`),
    1_000,
  );
  const build = await run("pnpm", ["exec", "turbo", "run", "build", `--filter=${filter}`, "--output-logs=errors-only"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  clearTimeout(notice);
  if (build.code !== 0) {
    process.stderr.write(`building ${pkg}'s dependencies failed:\n${build.output}`);
    process.exit(build.code);
  }
  if (Date.now() - started > 1_000) process.stderr.write(`memoria: built in ${Math.round((Date.now() - started) / 1000)} s\n`);
  // The inputs as they were when the build started (a file saved during it is newer, so the next run builds again).
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, JSON.stringify({ ...readStamps(), [filter]: before ?? inputsTime() }));
}

// Ctrl-C reaches the whole process group: the script decides what it means (the studio
// and the MCP server close and exit 0), and this process ends with the script's code,
// so pnpm does not report a failed command for a clean stop. A SIGTERM sent to this
// process alone is passed on.
const cwd = process.env.INIT_CWD ?? process.cwd();
const child = spawn(process.execPath, [...(script.endsWith(".ts") ? ["--import", "tsx"] : []), join(root, script), ...args], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, INIT_CWD: cwd, MEMORIA_CWD: cwd },
});
process.on("SIGINT", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.once("close", (code, signal) => process.exit(exitCodeOf(code, signal)));
