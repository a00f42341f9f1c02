import { privacySuite } from "@memoria/testkit";
import { filesHolding } from "@memoria/testkit/servers";
import { fileSuiteSetup } from "./fixtures/suite-setup.js";

const setup = fileSuiteSetup("file");
privacySuite({
  ...setup,
  // Every file of the store's folder (session files, ledgers, locks), byte for byte.
  scan: async (store, needle) => filesHolding(setup.folderOf(store), needle),
});
