export { type FileHistoryStore, type FileStoreOptions, createFileStore } from "./file-store.js";
