// `node scripts/with-build.mjs <package> <script.ts> [args…]`: builds the workspace
// packages <package> depends on (quietly; the build's output is printed only if it
// fails), then runs <script.ts> with tsx, passing the arguments on. The script runs
// in the repository's root; MEMORIA_CWD names the folder pnpm was started in, for
// paths the user typed (the memoria command resolves relative store paths there).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [pkg, script, ...args] = process.argv.slice(2);
const build = spawnSync("pnpm", ["exec", "turbo", "run", "build", `--filter=${pkg}^...`, "--output-logs=errors-only"], { cwd: root, encoding: "utf8" });
if (build.status !== 0) {
  process.stderr.write(`building ${pkg}'s dependencies failed:\n${build.stdout}${build.stderr}`);
  process.exit(build.status ?? 1);
}
const cwd = process.env.INIT_CWD ?? process.cwd();
const run = spawnSync(process.execPath, ["--import", "tsx", join(root, script), ...args], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, INIT_CWD: cwd, MEMORIA_CWD: cwd },
});
process.exit(run.status ?? 1);
