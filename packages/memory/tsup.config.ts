import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

// `agent` is its own entry: only an app using createAgent needs `langchain` installed.
export default defineConfig(packageBuild(["src/index.ts", "src/agent.ts"]));
