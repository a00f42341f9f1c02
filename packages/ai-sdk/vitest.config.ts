import { packageTestConfig } from "../../vitest.shared.js";

export default packageTestConfig(import.meta.dirname, { test: { globalSetup: ["test/global-setup.ts"] } });
