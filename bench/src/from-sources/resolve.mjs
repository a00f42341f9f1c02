// Module resolution hooks: `@memoria/<package>[/<entry>]` resolves to that package's
// source (`packages/<package>/src/<entry>.ts`, or `…/<entry>/index.ts`) instead of its
// build, so a run's coverage names source files. MEMORIA_ROOT names the checkout
// (default: this one), e.g. a worktree of an older commit to compare with.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = process.env.MEMORIA_ROOT ?? join(fileURLToPath(import.meta.url), "../../../..");

export async function resolve(specifier, context, next) {
  const match = /^@memoria\/([^/]+)(?:\/(.+))?$/.exec(specifier);
  if (!match) return next(specifier, context);
  const base = join(root, "packages", match[1], "src", match[2] ?? "index");
  return next(pathToFileURL(existsSync(`${base}.ts`) ? `${base}.ts` : join(base, "index.ts")).href, context);
}
