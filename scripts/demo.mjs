// `pnpm demo`: builds the packages the demo uses (quietly, printing the build's
// output only if it fails), then runs the demo with the arguments given.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const build = spawnSync("pnpm", ["exec", "turbo", "run", "build", "--filter=@memoria/examples^...", "--output-logs=errors-only"], {
  cwd: root,
  encoding: "utf8",
});
if (build.status !== 0) {
  process.stderr.write(build.stdout + build.stderr);
  process.exit(build.status ?? 1);
}
const demo = spawnSync(process.execPath, ["--import", "tsx", join(root, "examples/src/demo/chat.ts"), ...process.argv.slice(2)], {
  cwd: join(root, "examples"),
  stdio: "inherit",
  env: { ...process.env, INIT_CWD: process.env.INIT_CWD ?? process.cwd() },
});
process.exit(demo.status ?? 1);
