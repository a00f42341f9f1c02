import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, MemoriaError, RunnableWithMessageHistory, encodeSessionKey } from "@memoria/core";
import { HOSTILE_BUT_VALID_IDS, numbered, writeSentinelMemory, writeSentinelTurn } from "@memoria/testkit";
import { type RunningRedis, filesHolding, startRedis, timesHolding } from "@memoria/testkit/servers";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createRedisStore, keyLayout } from "../src/index.js";

const url = inject("redisUrl");
const admin = new Redis(url);
afterAll(() => admin.quit());

/**
 * A client that counts the commands it sends, and the round trips: a command sent
 * while no other is awaiting its answer starts one (commands sent together share it).
 */
function countingClient(): { client: Redis; sent: Record<string, number> } {
  const client = new Redis(url);
  const sent: Record<string, number> = {};
  let inFlight = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string; promise: Promise<unknown> }) => {
    sent[command.name] = (sent[command.name] ?? 0) + 1;
    if (inFlight++ === 0) sent.roundTrips = (sent.roundTrips ?? 0) + 1;
    const result = send(command as never);
    command.promise.then(
      () => inFlight--,
      () => inFlight--,
    );
    return result;
  }) as typeof client.sendCommand;
  return { client, sent };
}

function reset(counts: Record<string, number>) {
  for (const name of Object.keys(counts)) delete counts[name];
}

describe("redis key safety", () => {
  it("never touches a key outside its prefix: an application's own keys survive clear and delete", async () => {
    const prefix = `safety-${crypto.randomUUID()}:`;
    const store = createRedisStore({ url, keyPrefix: prefix });
    const appKeys = ["app:user:1", `${prefix.slice(0, -1)}`, "memoria", `x${prefix}{a}:m`];
    for (const key of appKeys) await admin.set(key, "mine");
    for (const id of HOSTILE_BUT_VALID_IDS) await store.append({ userId: "u", sessionId: id }, numbered(1));
    const written = await admin.keys(`*${prefix}*`);
    for (const key of written) if (!appKeys.includes(key)) expect(key.startsWith(prefix)).toBe(true);
    for (const id of HOSTILE_BUT_VALID_IDS.slice(0, 3)) await store.clear({ userId: "u", sessionId: id });
    expect(await store.delete({ userId: "u" })).toBe(HOSTILE_BUT_VALID_IDS.length - 3);
    for (const key of appKeys) expect(await admin.get(key)).toBe("mine");
    expect((await admin.keys(`${prefix}*`)).filter((k) => !appKeys.includes(k))).toEqual([]);
    await admin.del(...appKeys);
    await store.close();
  });

  it("keeps every key of a session in one Cluster slot, whatever the id holds", () => {
    const layout = keyLayout("memoria:");
    for (const id of ["a{b}c", "x}y{", "*:* \n"]) {
      const keys = Object.values(layout.session(encodeURIComponent(id)));
      const tags = keys.map((key) => /\{([^}]*)\}/.exec(key)?.[1]);
      expect(new Set(tags).size).toBe(1);
    }
    expect(() => keyLayout("bad{prefix")).toThrow(MemoriaError);
  });

  it("lists and erases by key field without KEYS or SCAN", async () => {
    const { client, sent } = countingClient();
    const store = createRedisStore({ client, keyPrefix: `idx-${crypto.randomUUID()}:` });
    for (let i = 0; i < 20; i++) await store.append({ userId: i % 2 ? "odd" : "even", conversationId: `c${i}` }, numbered(1));
    reset(sent);
    const { sessions } = await store.list({ userId: "odd" });
    expect(sessions).toHaveLength(10);
    // The key as written (its JSON, read in place of an EXISTS), fields in the caller's order.
    expect(sessions.map((key) => Object.keys(key).join(","))).toEqual(Array(10).fill("userId,conversationId"));
    expect(await store.delete({ userId: "even" })).toBe(10);
    // Each session erased by one script (EVALSHA; EVAL the first time a server lacks it).
    expect(
      Object.keys(sent)
        .filter((name) => name !== "eval")
        .sort(),
    ).toEqual(["evalsha", "get", "roundTrips", "zrangebylex"]);
    const [recent] = (await store.recent({ userId: "odd" }, { limit: 1 })).sessions;
    expect(Object.keys(recent?.key ?? {})).toEqual(["userId", "conversationId"]);
    await client.quit();
  });
});

/** Where an interleaving client's hook runs: right after the first answered command (of these names, or of any), or right before the first of these is sent. */
type HookPoint = { after: readonly string[] | "any" } | { before: readonly string[] };

/**
 * A client that, once armed, runs `between` once at the point given, before the store
 * that uses it goes on: what another process's write landing at that moment does.
 */
function interleavingClient(): { client: Redis; arm(point: HookPoint, between: () => Promise<unknown>): void } {
  const client = new Redis(url);
  let armed: { point: HookPoint; between: () => Promise<unknown> } | undefined;
  const matches = (names: readonly string[] | "any", name: string) => names === "any" || names.includes(name);
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }) => {
    const hook = armed;
    const fire = async () => {
      if (armed !== hook || !hook) return;
      armed = undefined;
      await hook.between();
    };
    if (hook && "before" in hook.point && matches(hook.point.before, command.name)) {
      return fire().then(() => send(command as never));
    }
    const answer = send(command as never) as unknown as Promise<unknown>;
    if (!hook || !("after" in hook.point) || !matches(hook.point.after, command.name)) return answer;
    return answer.then(async (value) => {
      await fire();
      return value;
    });
  }) as typeof client.sendCommand;
  return {
    client,
    arm(point, between) {
      armed = { point, between };
    },
  };
}

describe("redis erasure against a racing append", () => {
  /** Two stores on one prefix: `racing`'s commands can be interleaved with `other`'s, and a session of two messages written. */
  async function racingStores(key: { userId: string; conversationId: string }) {
    const prefix = `race-${crypto.randomUUID()}:`;
    const { client, arm } = interleavingClient();
    const racing = createRedisStore({ client, keyPrefix: prefix });
    const other = createRedisStore({ url, keyPrefix: prefix });
    await other.append(key, numbered(2));
    const close = () => Promise.all([racing.close(), other.close(), client.quit()]);
    return { prefix, arm, racing, other, close };
  }

  it("a turn appended while clear() runs is erased with the session or kept in its index, never stored where delete({ userId }) cannot find it", async () => {
    const key = { userId: "ada", conversationId: "c1" };
    const { arm, racing, other, close } = await racingStores(key);
    arm({ after: "any" }, () => other.append(key, numbered(1, 2)));
    await racing.clear(key);
    // The append came once the erasure had run whole: a new session, in its index.
    expect(await other.count(key)).toBe(1);
    expect((await other.list({ userId: "ada" })).sessions).toEqual([key]);
    expect(await other.delete({ userId: "ada" })).toBe(1);
    expect(await other.count(key)).toBe(0);
    await close();
  });

  /** What a stale-entry clean-up sends: a script on a standalone server, a plain ZREM before. */
  const DROP = ["evalsha", "eval", "zrem"];

  for (const [name, look] of [
    ["list", async (store: HistoryStore, userId: string) => (await store.list({ userId })).sessions],
    ["recent", async (store: HistoryStore, userId: string) => (await store.recent({ userId })).sessions.map((info) => info.key)],
  ] as const) {
    it(`${name} drops the entry of a session that is gone, but not of one an append made after it looked`, async () => {
      const key = { userId: `bob-${name}`, conversationId: "c1" };
      const { prefix, arm, racing, other, close } = await racingStores(key);
      // The session's keys gone (as expiry takes them), its index entries left behind.
      await admin.del(...Object.values(keyLayout(prefix).session(encodeSessionKey(key))));
      arm({ before: DROP }, () => other.append(key, numbered(1)));
      expect(await look(racing, key.userId)).toEqual([]); // gone when it looked
      expect(await look(racing, key.userId)).toEqual([key]);
      expect(await other.delete({ userId: key.userId })).toBe(1);
      await close();
    });
  }
});

describe("redis turn cost", () => {
  it("a turn that reads a corrupt record gives the lock back and fails as CORRUPT_DATA, as the read would", async () => {
    const prefix = `corrupt-${crypto.randomUUID()}:`;
    const store = createRedisStore({ url, keyPrefix: prefix });
    const key = { sessionId: "s" };
    await store.append(key, numbered(2));
    await admin.rpush(keyLayout(prefix).session(encodeSessionKey(key)).messages, "{not json");
    await expect(store.openTurn(key, { read: { last: 2 } })).rejects.toMatchObject({ code: "CORRUPT_DATA" });
    const next = await store.lock(key, { waitMs: 0 }); // not left held
    await next.release();
    const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => "answer"), store });
    await expect(chain.invoke("q", { configurable: key })).rejects.toMatchObject({ code: "CORRUPT_DATA" });
    expect(await admin.llen(keyLayout(prefix).session(encodeSessionKey(key)).messages)).toBe(3); // nothing written
    await store.close();
  });

  it('a turn\'s last save sent again after it was applied and released its lock says "stored already", not "lock lost"', async () => {
    const store = createRedisStore({ url });
    const key = { sessionId: crypto.randomUUID() };
    const turn = await store.openTurn(key);
    expect(await turn.save(numbered(2), { turnId: "t1", last: true })).toEqual({ appended: true });
    // Given back with the write, in the same script: another turn takes the lock at once.
    await (await store.lock(key, { waitMs: 0 })).release();
    // What a resend after a lost answer looks like: the same turn, the same (now released) lock.
    expect((await turn.save(numbered(2), { turnId: "t1", last: true })).appended).toBe(false);
    // A new turn under the released lock is still refused, writing nothing.
    await expect(turn.save(numbered(1), { turnId: "t2" })).rejects.toMatchObject({ code: "LOCK_LOST" });
    expect(await store.count(key)).toBe(2);
    await store.close();
  });

  it("a turn costs the same 2 round trips at 10 and at 2,000 stored messages, the lock included", async () => {
    const { client, sent } = countingClient();
    const store = createRedisStore({ client });
    const model = RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`));
    const chain = new RunnableWithMessageHistory({
      runnable: model,
      store,
      memory: { name: "last-20", load: ({ read }) => read({ last: 20 }), firstRead: { last: 20 } },
    });
    const costs: Record<string, number>[] = [];
    await chain.invoke([new HumanMessage("warm up: loads the scripts")], { configurable: { sessionId: crypto.randomUUID() } });
    for (const size of [10, 2_000]) {
      const sessionId = `cost-${size}-${crypto.randomUUID()}`;
      for (let i = 0; i < size; i += 500) await store.append({ sessionId }, numbered(Math.min(500, size - i), i));
      reset(sent);
      await chain.invoke([new HumanMessage("q")], { configurable: { sessionId } });
      costs.push({ ...sent });
    }
    // The lock taken and the last 20 read by one script (EVALSHA), then one script
    // that writes the session's index entries, appends and releases the lock: 2
    // commands, 2 round trips.
    expect(costs[0]).toEqual({ evalsha: 2, roundTrips: 2 });
    expect(costs[1]).toEqual(costs[0]);
    await client.quit();
  });
});

describe("redis faults", () => {
  let server: RunningRedis;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());

  it("stores each turn exactly once when the server is killed and restarted mid-run", async () => {
    const store = createRedisStore({ url: server.url });
    const key = { sessionId: "restart" };
    let failures = 0;
    for (let turn = 0; turn < 40; turn++) {
      if (turn === 15) await server.kill();
      // The application retries a failed turn with the same turn id; the outage
      // ends (the server restarts) after the third failed attempt.
      for (let attempt = 1; ; attempt++) {
        try {
          await store.append(key, [new HumanMessage(`q${turn}`), new AIMessage(`a${turn}`)], { turnId: `turn-${turn}` });
          break;
        } catch (error) {
          expect(MemoriaError.hasCode(error, "STORE_UNAVAILABLE")).toBe(true);
          failures++;
          if (attempt === 3) await server.restart();
        }
      }
    }
    const stored = (await store.read(key)).map((m) => String(m.content));
    expect(failures).toBeGreaterThan(0);
    expect(stored).toEqual(Array.from({ length: 40 }, (_, i) => [`q${i}`, `a${i}`]).flat());
    await store.close();
  }, 60_000);

  it("fails a turn with STORE_UNAVAILABLE while the server is down, instead of hanging", async () => {
    const store = createRedisStore({ url: server.url });
    const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from(() => "ok"), store });
    await chain.invoke("warm up", { configurable: { sessionId: "down" } });
    await server.kill();
    const error = await chain.invoke("hello?", { configurable: { sessionId: "down" } }).catch((e: unknown) => e);
    expect(MemoriaError.hasCode(error, "STORE_UNAVAILABLE")).toBe(true);
    await server.restart();
    await expect(chain.invoke("back", { configurable: { sessionId: "down" } })).resolves.toBe("ok");
    await store.close();
  }, 30_000);

  it("lets a lock whose owner died expire", async () => {
    const store = createRedisStore({ url: server.url });
    // What a process killed while holding the lock leaves: a token nobody renews.
    const lockKey = keyLayout("memoria:").session(encodeSessionKey({ sessionId: "orphan" })).lock;
    const direct = new Redis(server.url);
    await direct.set(lockKey, "a-dead-process", "PX", 300);
    await direct.quit();
    const second = await store.lock!({ sessionId: "orphan" }, { waitMs: 5_000 });
    await second.release();
    await expect(store.lock!({ sessionId: "busy" }, { ttlMs: 10_000 }).then(() => store.lock!({ sessionId: "busy" }, { waitMs: 50 }))).rejects.toMatchObject({
      code: "LOCK_TIMEOUT",
    });
    await store.close();
  });
});

describe("redis cluster", () => {
  it("puts a session's keys in one slot and serves a turn on a real cluster", async () => {
    const cluster = new Cluster(inject("clusterNodes"));
    const store = createRedisStore({ client: cluster });
    const key = { userId: "u", conversationId: "{weird}*:id" };
    await store.append(key, numbered(3));
    const layout = keyLayout("memoria:");
    const { encodeSessionKey } = await import("@memoria/core");
    const slots = await Promise.all(Object.values(layout.session(encodeSessionKey(key))).map((k) => cluster.cluster("KEYSLOT", k)));
    expect(new Set(slots).size).toBe(1);
    expect(await store.count(key)).toBe(3);
    await store.close();
    await cluster.quit();
  });
});

describe("redis append-only file", () => {
  /** The calls of each command the server ran (scripts' own calls included) since the last `CONFIG RESETSTAT`. */
  async function commandCalls(server: Redis): Promise<Record<string, number>> {
    const calls: Record<string, number> = {};
    for (const [, name, n] of (await server.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[name as string] = Number(n);
    return calls;
  }

  it("writes what a session keeps (its key, creation time, index entries by name) with its first write only: later turns neither run those calls nor add them to the append-only file", async () => {
    const aof = await startRedis();
    const server = new Redis(aof.url);
    try {
      const store = createRedisStore({ url: aof.url });
      const key = { userId: `u-${crypto.randomUUID()}`, conversationId: "c1" };
      const keyJson = JSON.stringify(key);
      const chain = new RunnableWithMessageHistory({
        runnable: RunnableLambda.from(() => new AIMessage("ok")),
        store,
        sessionFields: ["userId", "conversationId"],
      });
      for (let turn = 0; turn < 4; turn++) await chain.invoke([new HumanMessage(`q${turn}`)], { configurable: key });
      await server.config("RESETSTAT");
      await chain.invoke([new HumanMessage("q4")], { configurable: key });
      // The activity entries in its three index sets (userId, conversationId, all), the
      // activity time, the lock taken: no entry by name, no key, no creation time.
      expect(await commandCalls(server)).toMatchObject({ zadd: 3, hset: 1, set: 1 });
      expect((await commandCalls(server)).hsetnx).toBeUndefined();
      await store.setState(key, "summary", { text: "five questions" });
      expect(timesHolding(aof.dir, keyJson)).toBe(1);
      expect((await store.list({ userId: key.userId })).sessions).toEqual([key]);
      // Cleared, the session starts again and its key is written again, once.
      await store.clear(key);
      await chain.invoke([new HumanMessage("again")], { configurable: key });
      expect(timesHolding(aof.dir, keyJson)).toBe(2);
      expect((await store.list({ userId: key.userId })).sessions).toEqual([key]);
      expect(await store.count(key)).toBe(2);
      await store.close();
    } finally {
      await server.quit();
      await aof.stop();
    }
  }, 60_000);
});

describe("redis erasure on disk", () => {
  it("with rewriteAofOnDelete, after delete({ userId }) no append-only file holds the user's messages, state or long-term memory; without it they stay", async () => {
    // Uncompressed RDB base files, so a scan for bytes means something after a rewrite too.
    const aof = await startRedis(["--rdbcompression", "no"]);
    try {
      for (const rewriteAofOnDelete of [false, true]) {
        const store = createRedisStore({ url: aof.url, rewriteAofOnDelete });
        const sentinel = `SENTINEL-${crypto.randomUUID()}`;
        const key = { userId: `ada-${rewriteAofOnDelete}`, conversationId: "c1" };
        await writeSentinelTurn(store, key, sentinel);
        await writeSentinelMemory(store, { userId: key.userId }, sentinel);
        await store.append({ userId: "bob", conversationId: "c1" }, [new HumanMessage(`bob stays ${rewriteAofOnDelete}`)]);
        expect(filesHolding(aof.dir, sentinel).length).toBeGreaterThan(0);
        expect(await store.delete({ userId: key.userId })).toBe(2); // the conversation and the scope record
        if (rewriteAofOnDelete) {
          expect(filesHolding(aof.dir, sentinel)).toEqual([]);
          expect(filesHolding(aof.dir, `bob stays ${rewriteAofOnDelete}`).length).toBeGreaterThan(0);
        } else {
          expect(filesHolding(aof.dir, sentinel).length).toBeGreaterThan(0); // erased in memory only, until the next rewrite
        }
        await store.close();
      }
    } finally {
      await aof.stop();
    }
  }, 60_000);
});

describe("redis down", () => {
  it("names the server it could not reach, without its password, in one sentence", async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const store = createRedisStore({ url: "redis://:hunter2@127.0.0.1:1", operationTimeoutMs: 5_000 });
    try {
      const failed = (await store.read({ sessionId: "s" }).catch((error: unknown) => error)) as Error;
      expect(failed).toMatchObject({ code: "STORE_UNAVAILABLE" });
      expect(failed.message).toMatch(/^Redis at 127\.0\.0\.1:1 is unreachable: .*[^.]\.$/);
      expect(failed.message).not.toContain("hunter2");
    } finally {
      await store.close();
    }
  });
});
