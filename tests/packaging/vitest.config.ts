import { packageTestConfig } from "../../vitest.shared.js";

// npm install compiles better-sqlite3 from source in the fresh project: about 2 minutes.
export default packageTestConfig(import.meta.dirname, { test: { testTimeout: 600_000, hookTimeout: 600_000 } });
