import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

// The studio's page (HTML, CSS and browser modules) is copied beside the bundle as it is.
export default defineConfig({ ...packageBuild(["src/index.ts", "src/bin.ts"]), onSuccess: "rm -rf dist/studio-app && cp -r src/studio/app dist/studio-app" });
