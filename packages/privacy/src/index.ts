export { type EncryptionOptions, EncryptedStore, DATA_KEY_STATE, encryptStore } from "./encrypted-store.js";
export type { KeyMaterial, KeySource } from "./key-ring.js";
export type { RekeyOptions, RekeyProgress, RekeyReport } from "./rekey.js";
export { SEALED_ROLE } from "./sealed-records.js";
export { ForwardingStore } from "./forwarding-store.js";
export { GuardedStore, guardStore } from "./guarded-store.js";
export { type RedactionOptions, RedactingStore, redactMessage, redactStore } from "./redacting-store.js";
export { PATTERN_KINDS, type PatternKind, type PatternRedactorOptions, type Redactor, patternRedactor } from "./redactors.js";
export { ForbiddenError, IntegrityError, type AccessAction, type AccessRequest, type Authorize } from "@memoria/core";
