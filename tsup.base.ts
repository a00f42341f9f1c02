import type { Options } from "tsup";

/** The one build every package shares: ESM first, CommonJS too, with types. */
export function packageBuild(entry: Options["entry"] = ["src/index.ts"]): Options {
  return {
    entry,
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    splitting: false,
    treeshake: true,
    shims: true,
    // Without it esbuild renames classes that refer to themselves (MemoriaError became
    // "_MemoriaError" in dist), and errors would print under the wrong name.
    keepNames: true,
  };
}
