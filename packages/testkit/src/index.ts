import { appendsSuite } from "./suites/appends.js";
import { compactionSuite } from "./suites/compaction.js";
import { expirySuite } from "./suites/expiry.js";
import { fencingSuite } from "./suites/fencing.js";
import { interopSuite } from "./suites/interop.js";
import { messagesSuite } from "./suites/messages.js";
import { sessionsSuite } from "./suites/sessions.js";
import { stateSuite } from "./suites/state.js";
import type { StoreSuiteSetup } from "./types.js";

export type { FaultSuiteSetup, FaultyServer, StoreSuiteSetup } from "./types.js";
export { type FaultCounts, FaultLedger, describeCounts } from "./fault-ledger.js";
export { faultSuite } from "./suites/faults.js";
export { everyKindOfMessage, fieldsOf, numbered, randomKey, serializedTurnProblems, transcript } from "./fixtures.js";
export { writeSentinelTurn } from "./sentinel.js";
export { useStore, withStores } from "./harness.js";
export { HOSTILE_BUT_VALID_IDS, INVALID_IDS, sessionsSuite } from "./suites/sessions.js";
export { appendsSuite, compactionSuite, expirySuite, fencingSuite, interopSuite, messagesSuite, stateSuite };

/** Every area of the store contract, for one kind of store. */
export function runHistoryStoreSuite(setup: StoreSuiteSetup): void {
  messagesSuite(setup);
  appendsSuite(setup);
  sessionsSuite(setup);
  stateSuite(setup);
  compactionSuite(setup);
  expirySuite(setup);
  interopSuite(setup);
  fencingSuite(setup);
}
