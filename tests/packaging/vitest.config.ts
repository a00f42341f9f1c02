import { packageTestConfig } from "../../vitest.shared.js";

// npm install compiles better-sqlite3 from source in the fresh project: about 2 minutes alone,
// past 10 on a machine running other builds (a hook timed out at 600 s there).
export default packageTestConfig(import.meta.dirname, { test: { testTimeout: 900_000, hookTimeout: 900_000 } });
