import { runHistoryStoreSuite } from "@memoria/testkit";
import { createSqliteStore } from "../src/index.js";
import { sqliteSuiteSetup } from "./fixtures/suite-setup.js";

runHistoryStoreSuite(sqliteSuiteSetup("sqlite (file)"));

runHistoryStoreSuite({
  name: "sqlite (:memory:)",
  createStore: async () => createSqliteStore({ path: ":memory:" }),
});
