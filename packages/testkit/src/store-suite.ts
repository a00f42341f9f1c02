import { appendsSuite } from "./suites/appends.js";
import { compactionSuite } from "./suites/compaction.js";
import { conversationsSuite } from "./suites/conversations.js";
import { editsSuite } from "./suites/edits.js";
import { expirySuite } from "./suites/expiry.js";
import { fencingSuite } from "./suites/fencing.js";
import { interopSuite } from "./suites/interop.js";
import { messagesSuite } from "./suites/messages.js";
import { recallSuite } from "./suites/recall.js";
import { scopesSuite } from "./suites/scopes.js";
import { sessionsSuite } from "./suites/sessions.js";
import { stateSuite } from "./suites/state.js";
import type { StoreSuiteSetup } from "./types.js";

/** Every area of the store contract, for one kind of store. */
export function runHistoryStoreSuite(setup: StoreSuiteSetup): void {
  messagesSuite(setup);
  appendsSuite(setup);
  sessionsSuite(setup);
  conversationsSuite(setup);
  editsSuite(setup);
  scopesSuite(setup);
  stateSuite(setup);
  compactionSuite(setup);
  expirySuite(setup);
  interopSuite(setup);
  fencingSuite(setup);
  recallSuite(setup);
}
