import type { Options } from "tsup";

/**
 * The one build every package shares: ESM first, CommonJS too, with types. A package
 * with several entries that share module state (a class, a WeakMap) passes
 * `splitting: true`, so that state lives once, in a chunk both entries load.
 */
export function packageBuild(entry: Options["entry"] = ["src/index.ts"], options: { splitting?: boolean } = {}): Options {
  return {
    entry,
    format: ["esm", "cjs"],
    dts: true,
    // No source maps: the published code is not minified, and maps carrying the sources were 2.5-3x the code.
    sourcemap: false,
    clean: true,
    target: "node20",
    splitting: options.splitting ?? false,
    treeshake: true,
    shims: true,
    // No keepNames: it wraps every function the code creates in a call that defines its
    // `name` property, which was 8 % of a turn's CPU. A class whose body names itself
    // comes out as `class _Name` without it, so no class body does; the packaging test
    // checks every exported class's name in both formats.
    keepNames: false,
  };
}
