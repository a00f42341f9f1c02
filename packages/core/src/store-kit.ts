/**
 * `@memoria/core/store-kit`: what a store author uses. `defineStore(engine)` turns
 * a few string-moving primitives into a whole `HistoryStore`; the helpers below are
 * for stores that need more than the kit does for them.
 */
export { defineStore } from "./store-kit/define-store.js";
export { type EngineInfo, type EngineSession, LOCK_LOST, type LockLost, type StoreEngine, type TurnWrite } from "./store-kit/store-engine.js";
