import { privacySuite } from "@memoria/testkit";
import { type RunningRedis, filesHolding, startRedis } from "@memoria/testkit/servers";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { createRedisStore } from "../src/index.js";

// A server of this file's own, so its append-only file can be scanned too.
let server: RunningRedis;
let raw: Redis;
beforeAll(async () => {
  server = await startRedis();
  raw = new Redis(server.url);
});
afterAll(async () => {
  await raw?.quit();
  await server?.stop();
});

/**
 * Every key name and value in the server, and its append-only file, holding `needle`.
 * Read in two pipelines (types, then values), not two round trips a key: the suite's
 * other tests leave thousands of keys, and a scan a key at a time outran the test's
 * time on a loaded machine.
 */
async function scan(needle: string): Promise<string[]> {
  const keys = await raw.keys("*");
  const types = ((await raw.pipeline(keys.map((key) => ["type", key])).exec()) ?? []).map(([, type]) => type as string);
  const reads = keys.map((key, i): [string, ...string[]] => {
    const type = types[i];
    return type === "string"
      ? ["get", key]
      : type === "hash"
        ? ["hgetall", key]
        : type === "list"
          ? ["lrange", key, "0", "-1"]
          : type === "zset"
            ? ["zrange", key, "0", "-1"]
            : type === "set"
              ? ["smembers", key]
              : ["exists", key];
  });
  const values = ((await raw.pipeline(reads).exec()) ?? []).map(([, value]) => value);
  const places: string[] = [];
  for (const [i, key] of keys.entries()) {
    if (key.includes(needle)) places.push(`key name ${key}`);
    const value = values[i];
    const texts = typeof value === "string" ? [value] : Array.isArray(value) ? value : value && typeof value === "object" ? Object.entries(value).flat() : [];
    if (texts.some((text) => typeof text === "string" && text.includes(needle))) places.push(`value of ${key}`);
  }
  return [...places, ...filesHolding(server.dir, needle).map((file) => `file ${file}`)];
}

privacySuite({
  name: "redis",
  createStore: async () => createRedisStore({ url: server.url }),
  createPeer: async () => createRedisStore({ url: server.url }),
  createStoreWithTtl: async (ttlSeconds) => createRedisStore({ url: server.url, keyPrefix: "memoria-ttl:", ttlSeconds }),
  scan: (_store, needle) => scan(needle),
});
