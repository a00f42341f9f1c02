import { appendsSuite } from "./suites/appends.js";
import { compactionSuite } from "./suites/compaction.js";
import { expirySuite } from "./suites/expiry.js";
import { fencingSuite } from "./suites/fencing.js";
import { interopSuite } from "./suites/interop.js";
import { messagesSuite } from "./suites/messages.js";
import { stateSuite } from "./suites/state.js";

export type { FaultSuiteSetup, FaultyServer, PrivacySuiteSetup, StoreSuiteSetup } from "./types.js";
export { runHistoryStoreSuite } from "./store-suite.js";
export { encrypted, privacySuite, testKeys, wrapped } from "./suites/privacy.js";
export { tamperSuite } from "./suites/tamper.js";
export { type FaultCounts, FaultLedger, describeCounts } from "./fault-ledger.js";
export { faultSuite } from "./suites/faults.js";
export { everyKindOfMessage, fieldsOf, numbered, randomKey, serializedTurnProblems, transcript } from "./fixtures.js";
export { writeSentinelTurn } from "./sentinel.js";
export { useStore, withStores } from "./harness.js";
export { HOSTILE_BUT_VALID_IDS, INVALID_IDS, sessionsSuite } from "./suites/sessions.js";
export { appendsSuite, compactionSuite, expirySuite, fencingSuite, interopSuite, messagesSuite, stateSuite };
