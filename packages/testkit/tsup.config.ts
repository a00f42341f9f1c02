import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

export default defineConfig(
  packageBuild({
    index: "src/index.ts",
    "servers/index": "src/servers/index.ts",
    "fault-writer": "src/fault-writer.ts",
    "soak-worker": "src/soak-worker.ts",
    soak: "src/soak.ts",
    "scripted-model": "src/scripted-memory-model.ts",
    "sqlite-statements": "src/sqlite-statements.ts",
  }),
);
