// Compiles wasm/vector-scan.wat into src/vector-scan-wasm.ts (the module as base64), so
// the package ships no build step of its own: `pnpm --filter @memoria/recall build:wasm`.
// test/vector-slab.test.ts checks the committed file matches the source.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import wabtInit from "wabt";

/** The module's bytes, compiled from its text with 128-bit SIMD on. */
export async function compileVectorScan() {
  const wabt = await wabtInit();
  const source = readFileSync(fileURLToPath(new URL("../wasm/vector-scan.wat", import.meta.url)), "utf8");
  const module = wabt.parseWat("vector-scan.wat", source, { simd: true });
  try {
    return Buffer.from(module.toBinary({}).buffer);
  } finally {
    module.destroy();
  }
}

/** The generated TypeScript for those bytes. */
export function vectorScanSource(bytes) {
  return `// Generated from wasm/vector-scan.wat by \`pnpm --filter @memoria/recall build:wasm\` (wabt); do not edit.
/** The exact vector scan (vector-slab.ts) as a WebAssembly module with 128-bit SIMD, base64. */
export const VECTOR_SCAN_WASM =
  "${bytes.toString("base64")}";
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(fileURLToPath(new URL("../src/vector-scan-wasm.ts", import.meta.url)), vectorScanSource(await compileVectorScan()));
}
