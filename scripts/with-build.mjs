// `node scripts/with-build.mjs <package> <script.ts> [args…]`: builds the workspace
// packages <package> depends on (quietly, but saying so when it takes more than a
// moment; the build's output is printed only if it fails), then runs <script.ts> with
// tsx, passing the arguments on. The script runs in the repository's root;
// MEMORIA_CWD names the folder pnpm was started in, for paths the user typed (the
// memoria command resolves relative store paths there).
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
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

// A first build takes a minute or more: say so at once, rather than print nothing.
const started = Date.now();
const notice = setTimeout(
  () => process.stderr.write(`memoria: building the packages ${pkg.replace("@memoria/", "")} needs (a first run takes a minute or two)…\n`),
  1_000,
);
const build = await run("pnpm", ["exec", "turbo", "run", "build", `--filter=${pkg}^...`, "--output-logs=errors-only"], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
});
clearTimeout(notice);
if (build.code !== 0) {
  process.stderr.write(`building ${pkg}'s dependencies failed:\n${build.output}`);
  process.exit(build.code);
}
if (Date.now() - started > 1_000) process.stderr.write(`memoria: built in ${Math.round((Date.now() - started) / 1000)} s\n`);

// Ctrl-C reaches the whole process group: the script decides what it means (the studio
// and the MCP server close and exit 0), and this process ends with the script's code,
// so pnpm does not report a failed command for a clean stop. A SIGTERM sent to this
// process alone is passed on.
const cwd = process.env.INIT_CWD ?? process.cwd();
const child = spawn(process.execPath, ["--import", "tsx", join(root, script), ...args], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, INIT_CWD: cwd, MEMORIA_CWD: cwd },
});
process.on("SIGINT", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.once("close", (code, signal) => process.exit(exitCodeOf(code, signal)));
