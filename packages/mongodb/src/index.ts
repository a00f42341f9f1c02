export { type MongoHistoryStore, type MongoStoreOptions, createMongoStore } from "./mongo-store.js";
