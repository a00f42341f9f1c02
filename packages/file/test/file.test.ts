import { appendsSuite, compactionSuite, editsSuite, messagesSuite, runHistoryStoreSuite } from "@memoria/testkit";
import { fileSuiteSetup } from "./fixtures/suite-setup.js";

runHistoryStoreSuite(fileSuiteSetup("file"));

// With frozen: false only reads change (the cache keeps codec form and every read
// decodes copies): the suites that read messages back run again that way.
const copies = fileSuiteSetup("file (copies)", { frozen: false });
for (const suite of [messagesSuite, appendsSuite, editsSuite, compactionSuite]) suite(copies);
