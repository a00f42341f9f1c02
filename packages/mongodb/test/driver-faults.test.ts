import { DriverFaults, driverFaultSuite } from "@memoria/testkit";
import { type MongoBulkWriteError, MongoClient, MongoNetworkTimeoutError } from "mongodb";
import { afterAll, beforeAll, inject } from "vitest";
import { createMongoStore } from "../src/index.js";

const url = inject("mongoUrl");
const dbName = `memoria_driver_faults_${process.pid}`;
const real = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });

// The real driver: collection calls fail as they are made; find and aggregate fail when their cursor fetches.
const faults = new DriverFaults((owner, name) => {
  if (owner === "client") return name === "db" ? { wrap: "db" } : undefined;
  if (owner === "db") return name === "collection" ? { wrap: "collection" } : undefined;
  return { fail: name === "find" || name === "aggregate" ? "cursor" : "reject" };
});

// A real bulk write error, from a real server: an ordered insert that hits a duplicate key.
let bulkError: MongoBulkWriteError;
beforeAll(async () => {
  await real.connect();
  const scratch = real.db(dbName).collection<{ _id: number }>("scratch");
  await scratch.insertOne({ _id: 1 });
  bulkError = await scratch.insertMany([{ _id: 2 }, { _id: 1 }], { ordered: true }).then(
    () => {
      throw new Error("expected a bulk write error");
    },
    (error: MongoBulkWriteError) => error,
  );
});
afterAll(async () => {
  await real
    .db(dbName)
    .dropDatabase()
    .catch(() => undefined); // the compatible test server has no dropDatabase
  await real.close();
});

driverFaultSuite({
  name: "mongodb store",
  faults,
  // Short append-lock leases: a release that failed leaves its lock to expire.
  createStore: async () => createMongoStore({ client: faults.wrap(real, "client"), dbName, appendLockTtlMs: 300 }),
  errors: [
    ["a network timeout", () => new MongoNetworkTimeoutError("connection timed out")],
    ["a bulk write cut short", () => bulkError],
  ],
  // A duplicate-key error on taking a lock means "held by another": the lock polls again, as it should.
  skip: (call, error) => call === "lock and release" && error === "a bulk write cut short",
});
