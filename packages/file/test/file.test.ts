import { runHistoryStoreSuite } from "@memoria/testkit";
import { fileSuiteSetup } from "./fixtures/suite-setup.js";

runHistoryStoreSuite(fileSuiteSetup("file"));
