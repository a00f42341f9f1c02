import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

/*
 * The bench's child processes (W1's contenders, W2/W3's stores, W5's heap probes) run
 * their program compiled to plain JavaScript, not through tsx: tsx's loader answers
 * every import from a thread of its own, which cost each child about 0.6 s of start-up
 * here (1.3 s against 0.7 s for W1's worker), five or six children a run. The bench's
 * own files are bundled into one file; packages stay imports, resolved from the bench's
 * node_modules, so the file is written below it.
 */
const outdir = join(import.meta.dirname, "..", "node_modules", ".cache", "memoria-bench", String(process.pid));
const built = new Map<string, Promise<string>>();

/** The path of `src/<name>.ts` compiled to JavaScript, built once per run and removed when the run ends. */
export function workerScript(name: string): Promise<string> {
  let script = built.get(name);
  if (script === undefined) {
    if (built.size === 0) {
      mkdirSync(outdir, { recursive: true });
      process.once("exit", () => rmSync(outdir, { recursive: true, force: true }));
    }
    script = compile(name);
    built.set(name, script);
  }
  return script;
}

async function compile(name: string): Promise<string> {
  const outfile = join(outdir, `${name}.mjs`);
  await build({
    entryPoints: [join(import.meta.dirname, `${name}.ts`)],
    outfile,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
  });
  return outfile;
}
