import { privacySuite } from "@memoria/testkit";
import { MongoClient } from "mongodb";
import { afterAll, inject } from "vitest";
import { createMongoStore } from "../src/index.js";

const url = inject("mongoUrl");
const server = inject("mongoServer");
const dbName = `memoria_privacy_${process.pid}`;
const client = new MongoClient(url);
afterAll(() => client.close());

// The store's collections (the compatible test server has no listCollections).
const COLLECTIONS = ["sessions", "messages", "turns", "state"].flatMap((part) => [`memoria_${part}`, `memoria_ttl_${part}`]);

/** Every document of every collection of the test database whose JSON holds `needle`. */
async function scan(needle: string): Promise<string[]> {
  const db = client.db(dbName);
  const places: string[] = [];
  for (const name of COLLECTIONS) {
    for await (const document of db.collection(name).find({})) {
      if (JSON.stringify(document).includes(needle)) places.push(`${name} ${String(document._id)}`);
    }
  }
  return places;
}

privacySuite({
  name: `mongodb (${server})`,
  createStore: async () => createMongoStore({ url, dbName }),
  createPeer: async () => createMongoStore({ url, dbName }),
  createStoreWithTtl: async (ttlSeconds) => createMongoStore({ url, dbName, collectionName: "memoria_ttl", ttlSeconds }),
  scan: (_store, needle) => scan(needle),
});
