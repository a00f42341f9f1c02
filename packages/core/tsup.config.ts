import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

// Two entries, one copy of the code they share: `store-kit` loads the same chunks as the main entry.
export default defineConfig(packageBuild(["src/index.ts", "src/store-kit.ts"], { splitting: true }));
