import { packageTestConfig } from "../../vitest.shared.js";

// LangGraph's conformance suite calls describe/it/expect as globals, as its own runner sets them.
export default packageTestConfig(import.meta.dirname, { test: { globals: true, globalSetup: ["test/global-setup.ts"] } });
