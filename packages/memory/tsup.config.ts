import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

// A feature per entry; split, so what they share (the memory block's WeakSet, the scope
// work's queues) exists once. `agent` needs `langchain` installed; the others do not.
export default defineConfig(packageBuild(["src/index.ts", "src/long-term.ts", "src/classic.ts", "src/tools.ts", "src/agent.ts"], { splitting: true }));
