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

/** Every key name and value in the server, and its append-only file, holding `needle`. */
async function scan(needle: string): Promise<string[]> {
  const places: string[] = [];
  for (const key of await raw.keys("*")) {
    if (key.includes(needle)) places.push(`key name ${key}`);
    const type = await raw.type(key);
    const values =
      type === "string"
        ? [await raw.get(key)]
        : type === "hash"
          ? Object.entries(await raw.hgetall(key)).flat()
          : type === "list"
            ? await raw.lrange(key, 0, -1)
            : type === "zset"
              ? await raw.zrange(key, 0, -1)
              : type === "set"
                ? await raw.smembers(key)
                : [];
    if (values.some((value) => value?.includes(needle))) places.push(`value of ${key}`);
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
