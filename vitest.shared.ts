import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ViteUserConfig, defineConfig, mergeConfig } from "vitest/config";

/**
 * The vitest config every package shares. With VITEST_JSON_DIR set (as .ci/run
 * does), each package also writes a JSON report there, which
 * scripts/test-totals.mjs sums into the closing "N passed, M failed" line.
 */
export function packageTestConfig(packageDir: string, extra: ViteUserConfig = {}) {
  const { name } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { name: string };
  const jsonDir = process.env.VITEST_JSON_DIR;
  const base = defineConfig({
    test: {
      include: ["test/**/*.test.ts", "src/**/*.test.ts"],
      testTimeout: 30_000,
      hookTimeout: 120_000,
      reporters: jsonDir ? ["default", ["json", { outputFile: join(jsonDir, `${name.replace(/[^A-Za-z0-9_.-]/g, "_")}.json`) }]] : ["default"],
    },
  });
  return mergeConfig(base, extra);
}
