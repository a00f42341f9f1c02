export { type RedisStoreOptions, createRedisStore } from "./redis-store.js";
export { type KeyLayout, keyLayout } from "./key-layout.js";
