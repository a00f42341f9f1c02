import { packageTestConfig } from "../../vitest.shared.js";

export default packageTestConfig(import.meta.dirname, {
  // The MongoDB-compatible test server answers a contended append in tens of
  // milliseconds, so the conformance suite's race tests take 15 s on an idle
  // 2-core machine and more than 30 s on a busy one: they get 2 minutes here.
  test: { globalSetup: ["test/global-setup.ts"], testTimeout: 120_000 },
});
