import { packageTestConfig } from "../../vitest.shared.js";

// Each test runs the `memoria` command in child processes, each starting Node: on a
// busy machine (every package's tests at once on 2 cores) a test with seven of them
// once took longer than the shared 30 s.
export default packageTestConfig(import.meta.dirname, { test: { globalSetup: ["test/global-setup.ts"], testTimeout: 120_000 } });
