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
  };
}
