/** The vector scan's module bytes, compiled from wasm/vector-scan.wat. */
export function compileVectorScan(): Promise<Buffer>;
/** The TypeScript source that carries those bytes (src/vector-scan-wasm.ts). */
export function vectorScanSource(bytes: Buffer): string;
