import { HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, MemoriaError } from "@memoria/core";
import { numbered, randomKey } from "@memoria/testkit";
import { type Collection, type Db, type MongoBulkWriteError, MongoClient, MongoNetworkTimeoutError } from "mongodb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createMongoStore } from "../src/index.js";

const url = inject("mongoUrl");
const dbName = `memoria_driver_faults_${process.pid}`;

/**
 * The real driver, with its collection calls counted: the `failAt`-th call from now
 * fails with `error()` instead of reaching the server (a timeout, a bulk write cut
 * short), as a driver does when the network or the server gives out mid-call.
 */
function failingCursor(cursor: object, error: Error): object {
  const fetches = new Set(["toArray", "next", "hasNext", "tryNext", "forEach"]);
  const proxy: object = new Proxy(cursor, {
    get: (target, name) => {
      if (typeof name === "string" && fetches.has(name)) return () => Promise.reject(error);
      const value = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = value.apply(target, args);
        return result === target ? proxy : result; // sort, limit, project: the same cursor
      };
    },
  });
  return proxy;
}

class Faults {
  failAt = 0;
  calls = 0;
  fired = false;
  error: () => Error = () => new MongoNetworkTimeoutError("connection timed out");

  arm(at: number, error: () => Error) {
    Object.assign(this, { failAt: at, calls: 0, fired: false, error });
  }

  client(real: MongoClient): MongoClient {
    const wrapCollection = (collection: Collection) =>
      new Proxy(collection, {
        get: (target, name) => {
          const value = Reflect.get(target, name, target);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            if (!(this.failAt > 0 && ++this.calls === this.failAt)) return value.apply(target, args);
            this.fired = true;
            // A cursor fails when it fetches; every other call fails as it is made.
            return name === "find" || name === "aggregate" ? failingCursor(value.apply(target, args), this.error()) : Promise.reject(this.error());
          };
        },
      });
    const wrapDb = (db: Db) => new Proxy(db, { get: (t, n) => (n === "collection" ? (name: string) => wrapCollection(t.collection(name)) : Reflect.get(t, n, t)) });
    return new Proxy(real, { get: (t, n) => (n === "db" ? (name?: string) => wrapDb(t.db(name)) : Reflect.get(t, n, t)) });
  }
}

describe("mongodb store: every driver failure of every call is a typed error, and a write resolves only if stored", () => {
  const real = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  const faults = new Faults();
  let store: HistoryStore;
  let bulkError: MongoBulkWriteError;

  beforeAll(async () => {
    await real.connect();
    // A real bulk write error, from a real server: an ordered insert that hits a duplicate key.
    const scratch = real.db(dbName).collection<{ _id: number }>("scratch");
    await scratch.insertOne({ _id: 1 });
    bulkError = await scratch.insertMany([{ _id: 2 }, { _id: 1 }], { ordered: true }).then(
      () => {
        throw new Error("expected a bulk write error");
      },
      (error: MongoBulkWriteError) => error,
    );
    // Short append-lock leases: a release that failed leaves its lock to expire.
    store = createMongoStore({ client: faults.client(real), dbName, appendLockTtlMs: 300 });
  });
  afterAll(async () => {
    await store?.close();
    await real.db(dbName).dropDatabase().catch(() => undefined); // the compatible test server has no dropDatabase
    await real.close();
  });

  const kinds: [string, () => Error][] = [
    ["a network timeout", () => new MongoNetworkTimeoutError("connection timed out")],
    ["a bulk write cut short", () => bulkError],
  ];

  /** Runs `call` with a failure at each of its driver calls in turn, until it makes them all; returns the failures seen. */
  async function everyFailure(call: () => Promise<unknown>, error: () => Error, after?: (failed: unknown) => Promise<void>) {
    const failures: unknown[] = [];
    for (let at = 1; at < 100; at++) {
      faults.arm(at, error);
      const failed = await call().then(
        () => undefined,
        (e: unknown) => e ?? new Error("rejected without an error"),
      );
      const fired = faults.fired;
      faults.arm(0, error);
      if (!fired) {
        expect(failed).toBeUndefined();
        return failures;
      }
      if (failed) {
        failures.push(failed);
        expect(MemoriaError.isInstance(failed), String(failed)).toBe(true);
        expect(failed).toMatchObject({ code: "STORE_UNAVAILABLE" });
      }
      await after?.(failed);
    }
    throw new Error("the call never got through");
  }

  for (const [kind, error] of kinds) {
    it(`${kind}: append resolves if and only if its turn is stored, and a retry stores it once`, async () => {
      const key = randomKey("append");
      await store.append(key, numbered(2));
      let stored = 2;
      const failures = await everyFailure(
        () => store.append(key, [new HumanMessage("q"), new HumanMessage("a")], { turnId: `t-${stored}` }),
        error,
        async (failed) => {
          const count = (await store.read(key)).length;
          if (!failed) expect(count).toBe(stored + 2);
          else if ((failed as { outcome?: string }).outcome === "not-stored") expect(count).toBe(stored);
          // Whatever happened, the same turn id again leaves the turn stored exactly once.
          await store.append(key, [new HumanMessage("q"), new HumanMessage("a")], { turnId: `t-${stored}` });
          stored += 2;
          expect(await store.read(key)).toHaveLength(stored);
        },
      );
      expect(failures.length).toBeGreaterThan(2);
    }, 60_000);

    it(`${kind}: every other call fails typed and leaves the store usable`, async () => {
      const key = randomKey("calls");
      await store.append(key, numbered(30));
      await store.setState(key, "summary", "s");
      const user = { userId: `u-${crypto.randomUUID()}`, conversationId: "c" };
      const calls: [string, () => Promise<unknown>][] = [
        ["read", () => store.read(key, { last: 2 })],
        ["count", () => store.count(key)],
        ["getState", () => store.getState(key, "summary")],
        ["getAllState", () => store.getAllState!(key)],
        ["setState", () => store.setState(key, "summary", "t")],
        ["info", () => store.info!(key)],
        ["setInfo", () => store.setInfo!(key, { title: "a title" })],
        ["list", () => store.list({ sessionId: key.sessionId })],
        ["recent", () => store.recent!({ sessionId: key.sessionId })],
        ["replaceTail", async () => store.replaceTail!(key, { from: (await store.count(key)) - 1, count: await store.count(key), messages: [new HumanMessage("edited")] })],
        ["trim", () => store.trim!(key, { oldest: 1 })],
        ["lock and release", async () => (await store.lock!(key, { waitMs: 5_000 })).release()],
        ["append then clear", async () => store.append(user, numbered(1)).then(() => store.clear(user))],
        ["append then delete", async () => store.append(user, numbered(1)).then(() => store.delete({ userId: user.userId }))],
      ];
      for (const [name, call] of calls) {
        // A duplicate-key error on taking a lock means "held by another": the lock polls again, as it should.
        if (name === "lock and release" && error() === bulkError) continue;
        const failures = await everyFailure(call, error);
        expect(failures.length, name).toBeGreaterThan(0);
      }
      expect((await store.read(key)).length).toBeGreaterThan(0);
    }, 120_000); // about 300 failed calls, some waiting out a lock lease: slow on a busy machine
  }
});
