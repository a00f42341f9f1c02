import { defineConfig } from "tsup";

// The demo is built so that `pnpm demo` runs it with node: through tsx, whose hooks see
// every module the demo loads, it started in twice the time. Its own files are bundled;
// packages stay imports. The other examples run from their sources.
export default defineConfig({
  entry: { "demo/chat": "src/demo/chat.ts" },
  format: ["esm"],
  target: "node20",
  clean: true,
  sourcemap: false,
});
