export { MemoriaSaver, type MemoriaSaverOptions } from "./memoria-saver.js";
export { ThreadBusyError } from "./errors.js";
export { THREAD_FIELD } from "./thread-address.js";
export { MemoriaStore, type MemoriaStoreOptions, type NamespaceScope } from "./memoria-store.js";
export { type CopyReport, type CopyThreadsOptions, copyThreads } from "./copy-threads.js";
