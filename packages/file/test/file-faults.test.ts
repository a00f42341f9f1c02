import { execFile } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory, encodeSessionKey } from "@memoria/core";
import { filesHolding, onSmallDisk } from "@memoria/testkit/servers";
import { writeSentinelMemory, writeSentinelTurn } from "@memoria/testkit";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createFileStore } from "../src/index.js";

const root = mkdtempSync(join(tmpdir(), "memoria-file-faults-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const openDescriptors = () => readdirSync("/proc/self/fd").length;

describe("file store on a full disk", () => {
  // Turns past 64 KiB are written through libuv's thread pool, smaller ones synchronously (and their lock files too).
  it.for([
    { size: 300_000, how: "written through the thread pool" },
    { size: 20_000, how: "written synchronously" },
  ])(
    "rejects the turn that does not fit ($how) with a typed error, keeps every turn it resolved, leaks no descriptor, and recovers",
    async ({ size }, context) => {
      await onSmallDisk(
        1024 * 1024,
        (reason) => context.skip(reason),
        async (diskPath) => {
          const store = createFileStore({ directory: join(diskPath, "sessions") });
          const key = { sessionId: "big-turns" };
          const turn = (i: number) => [new HumanMessage(`q${i} ${"x".repeat(size)}`), new AIMessage(`a${i}`)];
          const before = openDescriptors();
          let resolved = 0;
          const failures: unknown[] = [];
          for (let i = 0; failures.length < 2 && i < 200; i++) {
            await store.append(key, turn(i), { turnId: `t${i}` }).then(
              () => resolved++,
              (error: unknown) => failures.push(error),
            );
          }
          expect(resolved).toBeGreaterThan(0);
          expect(failures.length).toBeGreaterThan(0);
          for (const error of failures) expect(error).toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored" });
          expect((failures[0] as Error).message).toContain("disk is full");
          // Only whole turns, exactly the ones that resolved, also for a fresh reader.
          const fresh = createFileStore({ directory: join(diskPath, "sessions") });
          expect(await fresh.count(key)).toBe(2 * resolved);
          expect((await fresh.read(key)).filter((m) => m.getType() === "ai").map((m) => m.content)).toEqual(
            Array.from({ length: resolved }, (_, i) => `a${i}`),
          );
          expect(openDescriptors()).toBeLessThanOrEqual(before + 1);
          // The turn lock too: failures leave no lock behind that would block the next turn.
          const chain = new RunnableWithMessageHistory({ store, runnable: RunnableLambda.from(() => "ok") });
          await expect(chain.invoke(`too big ${"y".repeat(400_000)}`, { configurable: key })).rejects.toMatchObject({
            code: "SAVE_FAILED",
            outcome: "not-stored",
          });
          await store.clear(key);
          await expect(chain.invoke("fits now", { configurable: key })).resolves.toBe("ok");
          expect(await store.count(key)).toBe(2);
          await Promise.all([store.close(), fresh.close()]);
        },
      );
    },
  );
});

describe("file store locks", () => {
  it("never admits two holders when 4 processes recover one stale lock at once (40 rounds)", async () => {
    const directory = join(root, "stale");
    const sessions = createFileStore({ directory: join(directory, "sessions") });
    const rounds = 40;
    for (let round = 0; round < rounds; round++) {
      // A lock left by a holder whose lease ran out, for each round.
      const hash = createHash("sha256")
        .update(encodeSessionKey({ sessionId: `stale-${round}` }))
        .digest("hex");
      const dir = join(directory, "sessions", hash.slice(0, 2));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${hash}.turn.lock`), JSON.stringify({ owner: "gone", expires: Date.now() - 1, pid: -1, host: "elsewhere" }));
    }
    const contender = join(import.meta.dirname, "fixtures", "lock-contender.ts");
    const run = (name: string) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", contender, directory, name, String(rounds), "4"], { cwd: import.meta.dirname });
    await Promise.all(["a", "b", "c", "d"].map(run));
    const overlaps: string[] = [];
    const lines = readFileSync(join(directory, "log"), "utf8").trim().split("\n");
    for (let round = 0; round < rounds; round++) {
      const events = lines.filter((line) => line.startsWith(`${round} `)).map((line) => line.split(" ")[1]);
      expect(events).toHaveLength(8);
      if (events.some((event, i) => event !== (i % 2 ? "exit" : "enter"))) overlaps.push(`round ${round}: ${events.join(",")}`);
    }
    expect([...new Set(overlaps)]).toEqual([]);
    await sessions.close();
  }, 120_000);
});

describe("file store sessions past 512 MB", () => {
  it("appends to and reads a session whose file is larger than the largest string", async () => {
    const directory = join(root, "huge");
    const store = createFileStore({ directory, fsync: "none" });
    const key = { sessionId: "huge" };
    await store.append(key, [new HumanMessage("first")], { turnId: "t0" });
    const hash = createHash("sha256").update(encodeSessionKey(key)).digest("hex");
    const file = join(directory, hash.slice(0, 2), `${hash}.jsonl`);
    // 540 turns of one 1 MiB message each, as memoria writes them, appended to the file directly.
    const body = "z".repeat(1024 * 1024);
    const fd = openSync(file, "a");
    for (let i = 1; i <= 540; i++) {
      writeSync(fd, `${JSON.stringify({ t: `t${i}`, n: i + 1, m: [{ v: 1, type: "human", data: { content: body } }] })}\n`);
    }
    closeSync(fd);
    expect(statSync(file).size).toBeGreaterThan(2 ** 29);
    const reopened = createFileStore({ directory, fsync: "none" });
    await expect(reopened.append(key, [new AIMessage("still appendable")], { turnId: "last" })).resolves.toEqual({ appended: true });
    await expect(reopened.append(key, [new AIMessage("retry")], { turnId: "t7" })).resolves.toEqual({ appended: false });
    expect(await reopened.count(key)).toBe(542);
    expect((await reopened.read(key, { last: 1 }))[0]?.content).toBe("still appendable");
    expect(readFileSync(file).subarray(-40).toString()).toContain("still appendable");
    await Promise.all([store.close(), reopened.close()]);
    rmSync(directory, { recursive: true, force: true });
  }, 120_000);
});

describe("file store permissions", () => {
  it("creates its folders 0700 and its files 0600", async () => {
    const directory = join(root, "private");
    const store = createFileStore({ directory });
    const key = { sessionId: "private" };
    await store.append(key, [new HumanMessage("secret")]);
    await store.setState(key, "summary", "secret");
    const held = await store.lock!(key);
    const hash = createHash("sha256").update(encodeSessionKey(key)).digest("hex");
    const shard = join(directory, hash.slice(0, 2));
    expect(statSync(directory).mode & 0o777).toBe(0o700);
    expect(statSync(shard).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(shard)) expect([name, statSync(join(shard, name)).mode & 0o777]).toEqual([name, 0o600]);
    await held.release();
    await store.close();
  });
});

describe("file store erasure", () => {
  it("after delete({ userId }), no file under the directory holds the user's messages, state, long-term memory or lock", async () => {
    const directory = join(root, "erase");
    const store = createFileStore({ directory });
    const sentinel = `SENTINEL-${crypto.randomUUID()}`;
    for (let c = 0; c < 3; c++) {
      const key = { userId: "ada", conversationId: `c${c}` };
      await writeSentinelTurn(store, key, sentinel);
    }
    await writeSentinelMemory(store, { userId: "ada" }, sentinel);
    await store.append({ userId: "bob", conversationId: "c0" }, [new HumanMessage("bob stays")]);
    const holding = (needle: string) => filesHolding(directory, needle);
    expect(holding(sentinel).length).toBe(7);
    expect(await store.delete({ userId: "ada" })).toBe(4); // three conversations and the scope record
    expect(holding(sentinel)).toEqual([]);
    expect(holding("bob stays")).toHaveLength(1);
    // The turn locks went with the sessions: no lock file of an erased session is left.
    expect((readdirSync(directory, { recursive: true }) as string[]).filter((name) => name.endsWith(".lock"))).toEqual([]);
    await store.close();
  });
});

describe("file store folders", () => {
  it("keeps working when its directory is removed under it", async () => {
    const directory = join(root, "removed");
    const store = createFileStore({ directory, fsync: "none" });
    await store.append({ sessionId: "r" }, [new HumanMessage("before")]);
    rmSync(directory, { recursive: true, force: true });
    await store.append({ sessionId: "r" }, [new HumanMessage("after")]);
    const held = await store.lock!({ sessionId: "r" });
    await held.release();
    expect((await store.read({ sessionId: "r" })).map((m) => m.content)).toEqual(["after"]);
    await store.close();
  });
});
