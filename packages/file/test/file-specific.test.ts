import { type ChildProcess, execFile, spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemoriaError } from "@memoria/core";
import { HOSTILE_BUT_VALID_IDS, numbered, serializedTurnProblems, transcript } from "@memoria/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { createFileStore } from "../src/index.js";

const root = mkdtempSync(join(tmpdir(), "memoria-file-x-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `d${++n}`);
const writer = join(import.meta.dirname, "fixtures", "writer.ts");

function files(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)));
}

describe("file store", () => {
  it("keeps hostile ids inside the directory, in files named by hash", async () => {
    const directory = fresh();
    const store = createFileStore({ directory });
    for (const id of HOSTILE_BUT_VALID_IDS) await store.append({ sessionId: id }, numbered(1));
    const names = files(directory);
    expect(names).toHaveLength(HOSTILE_BUT_VALID_IDS.length);
    for (const name of names) expect(name).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{64}\.jsonl$/);
    expect(existsSync(join(root, "etc"))).toBe(false);
  });

  it("lists a session's key with its fields in the order they were written, as the SQL stores do", async () => {
    const store = createFileStore({ directory: fresh() });
    await store.append({ userId: "bob", conversationId: "intro" }, numbered(2));
    const order = (key: object) => Object.keys(key).join(",");
    expect((await store.list({ userId: "bob" })).sessions.map(order)).toEqual(["userId,conversationId"]);
    expect((await (store.recent as NonNullable<typeof store.recent>)({ userId: "bob" })).sessions.map((info) => order(info.key))).toEqual([
      "userId,conversationId",
    ]);
    await store.close();
  });

  it("writes a turn as one line, appends without rewriting, and reads a window from the tail only", async () => {
    const directory = fresh();
    const store = createFileStore({ directory });
    const key = { sessionId: "tail" };
    for (let i = 0; i < 300; i++) await store.append(key, [new HumanMessage(`q${i}`), new AIMessage(`a${i}`)]);
    const [file] = files(directory).map((f) => join(directory, f));
    const lines = readFileSync(file as string, "utf8").split("\n");
    expect(lines).toHaveLength(302); // header, 300 turns, the final newline
    // Corrupt the first turn: a windowed read must never see it, a full read must.
    lines[1] = `{"broken": ${" ".repeat((lines[1] as string).length - 11)}`;
    writeFileSync(file as string, lines.join("\n"));
    // Read by another instance: the writer's cache, which holds what it wrote, would not look (see below).
    const reader = createFileStore({ directory });
    expect(transcript(await reader.read(key, { last: 2 }))).toEqual(["human: q299", "ai: a299"]);
    expect(await reader.count(key)).toBe(600);
    await expect(reader.read(key)).rejects.toMatchObject({ code: "CORRUPT_DATA" });
  });

  it("reads what another instance wrote after it erased a session and wrote it again (the same inode, a longer file)", async () => {
    const directory = fresh();
    const [reader, writer] = [createFileStore({ directory }), createFileStore({ directory })];
    const key = { sessionId: "again" };
    await writer.append(key, numbered(2));
    expect(transcript(await reader.read(key, { last: 1 }))).toEqual(["human: m1"]);
    expect(transcript(await reader.read(key))).toEqual(["human: m0", "human: m1"]);
    await writer.clear(key);
    await writer.append(key, [new HumanMessage("a much longer first message than before"), new AIMessage("and its answer")]);
    await writer.append(key, [new HumanMessage("second")]);
    expect(transcript(await reader.read(key))).toEqual(["human: a much longer first message than before", "ai: and its answer", "human: second"]);
    expect(transcript(await reader.read(key, { last: 2 }))).toEqual(["ai: and its answer", "human: second"]);
    expect(await reader.count(key)).toBe(3);
    await writer.append(key, [new AIMessage("third")]);
    expect(transcript(await reader.read(key, { last: 1 }))).toEqual(["ai: third"]);
  });

  it("reads an unchanged file from its tail cache: bytes changed in place, at the same size, are not read again", async () => {
    const directory = fresh();
    const store = createFileStore({ directory });
    const key = { sessionId: "cached" };
    await store.append(key, [new HumanMessage("first"), new AIMessage("reply")]);
    expect(transcript(await store.read(key))).toEqual(["human: first", "ai: reply"]);
    const [file] = files(directory).map((f) => join(directory, f));
    // Same inode, same size, other bytes (writeFileSync truncates and rewrites in place):
    // a cached read does not open the file, so it still gives what memoria wrote.
    writeFileSync(file as string, readFileSync(file as string, "utf8").replace("first", "FIRST"));
    expect(transcript(await store.read(key))).toEqual(["human: first", "ai: reply"]);
    // A new store has no cache: it reads the file.
    expect(transcript(await createFileStore({ directory }).read(key))).toEqual(["human: FIRST", "ai: reply"]);
  });

  it("knows a session file it began: the next read and the next append read nothing of it back", async () => {
    const directory = fresh();
    const store = createFileStore({ directory });
    const key = { sessionId: "begun" };
    await store.append(key, [new HumanMessage("first"), new AIMessage("reply")], { turnId: "turn-aaaa" });
    const [file] = files(directory).map((f) => join(directory, f));
    // In place, at the same size: what this store would find if it read the file again.
    writeFileSync(
      file as string,
      readFileSync(file as string, "utf8")
        .replace("first", "FIRST")
        .replace("turn-aaaa", "turn-bbbb"),
    );
    expect(transcript(await store.read(key))).toEqual(["human: first", "ai: reply"]);
    // Its bookkeeping holds the turn id it wrote, not the one now on disk.
    expect(await store.append(key, [new HumanMessage("second")], { turnId: "turn-bbbb" })).toEqual({ appended: true });
    expect(transcript(await store.read(key, { last: 1 }))).toEqual(["human: second"]);
    expect(transcript(await createFileStore({ directory }).read(key))).toEqual(["human: FIRST", "ai: reply", "human: second"]);
  });

  it("catches up on what another instance wrote, in small steps and past the size read synchronously (64 KiB)", async () => {
    const directory = fresh();
    const [a, b] = [createFileStore({ directory }), createFileStore({ directory })];
    const key = { sessionId: "both" };
    const long = (i: number) => new HumanMessage(`${i} ${"a longer message, so that the file grows past what is read in one synchronous call. ".repeat(20)}`);
    await a.append(key, [long(0)], { turnId: "t-0" });
    expect(transcript(await b.read(key, { last: 1 }))).toEqual([transcript([long(0)])[0]]);
    for (let i = 1; i < 60; i++) await a.append(key, [long(i)], { turnId: `t-${i}` }); // about 100 KiB more
    // b's cache and bookkeeping are behind by more than 64 KiB: both catch up through the thread pool.
    expect((await b.read(key)).length).toBe(60);
    expect(await b.append(key, [long(99)], { turnId: "t-59" })).toEqual({ appended: false });
    expect(await b.append(key, [new AIMessage("small")], { turnId: "t-60" })).toEqual({ appended: true });
    // a is behind by one small turn: read synchronously.
    expect(transcript(await a.read(key, { last: 2 }))).toEqual([transcript([long(59)])[0], "ai: small"]);
    expect(await a.append(key, [new AIMessage("again")], { turnId: "t-60" })).toEqual({ appended: false });
    expect(await createFileStore({ directory }).count(key)).toBe(61);
  });

  it("moves a session's last activity on with every append, a state write before it too (the file's time is set by the store)", async () => {
    const store = createFileStore({ directory: fresh() });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // The kernel's own time after a state write's (taken from this clock) did not always move on: 1 in 6 appends here.
    for (let i = 0; i < 20; i++) {
      const key = { sessionId: `active-${i}` };
      await store.setState(key, "x", i);
      await store.append(key, [new HumanMessage("first")]);
      const first = (await store.info(key))?.lastActiveAt as number;
      await sleep(5);
      await store.append(key, [new HumanMessage("second")]);
      expect((await store.info(key))?.lastActiveAt).toBeGreaterThan(first);
    }
  });

  it("ignores a torn last line when reading, and cuts it off on the next append", async () => {
    const directory = fresh();
    const store = createFileStore({ directory });
    const key = { sessionId: "torn" };
    await store.append(key, numbered(2));
    const [file] = files(directory).map((f) => join(directory, f));
    appendFileSync(file as string, '{"t":"half-written","n":3,"m":[{"v":1,"type":"hu');
    expect(transcript(await store.read(key))).toEqual(["human: m0", "human: m1"]);
    expect(await store.count(key)).toBe(2);
    await store.append(key, numbered(1, 2));
    expect(transcript(await store.read(key))).toEqual(["human: m0", "human: m1", "human: m2"]);
    expect(readFileSync(file as string, "utf8")).not.toContain("half-written");
    expect(readFileSync(file as string, "utf8").endsWith("\n")).toBe(true);
  });

  it("survives a writer killed with SIGKILL: every complete turn reads back, in order", async () => {
    const directory = fresh();
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", writer, directory, "crash", "w", "forever"], { cwd: import.meta.dirname });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (data: Buffer) => data.toString().includes("started") && resolve());
      child.on("exit", (code) => reject(new Error(`writer exited early (${code})`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 100));
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("exit", resolve));
    const store = createFileStore({ directory });
    const stored = await store.read({ sessionId: "crash" });
    expect(stored.length).toBeGreaterThan(10);
    expect(stored.length % 2).toBe(0);
    for (let i = 0; i < stored.length; i += 2) {
      expect(String(stored[i]!.content).startsWith(`w-q${i / 2} `)).toBe(true);
      expect(stored[i + 1]!.content).toBe(`w-a${i / 2}`);
    }
    expect(await store.count({ sessionId: "crash" })).toBe(stored.length);
    // The next writer repairs whatever the kill tore and goes on.
    await store.append({ sessionId: "crash" }, numbered(1, 9999));
    expect(await store.count({ sessionId: "crash" })).toBe(stored.length + 1);
    const turns = stored.length / 2;
    // A turn the killed writer never finished, retried with its id, is stored once.
    expect(await store.append({ sessionId: "crash" }, numbered(2), { turnId: `w-${turns - 1}` })).toEqual({ appended: false });
  }, 60_000);

  it("two processes writing one session: nothing lost or duplicated, turns never interleaved", async () => {
    const directory = fresh();
    const run = (name: string) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", writer, directory, "shared", name, "15"], { cwd: import.meta.dirname });
    await Promise.all([run("alpha"), run("beta")]);
    const stored = await createFileStore({ directory }).read({ sessionId: "shared" });
    expect(serializedTurnProblems(stored, 30)).toEqual([]);
  }, 60_000);

  it("prunes expired sessions, and refuses a missing directory option", async () => {
    const directory = fresh();
    const store = createFileStore({ directory, ttlSeconds: 1 });
    await store.append({ sessionId: "old" }, numbered(1));
    await store.setState({ sessionId: "old" }, "summary", "x");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await store.append({ sessionId: "new" }, numbered(1));
    expect(await store.prune()).toBe(1);
    expect(files(directory).filter((f) => !f.endsWith(".lock"))).toHaveLength(1);
    expect(() => createFileStore({} as never)).toThrow(MemoriaError);
  });
});

describe("file locks", () => {
  it("takes over a lock file its creator left empty (killed between creating and writing it)", async () => {
    const { lockFile } = await import("../src/file-lock.js");
    const { utimesSync } = await import("node:fs");
    const path = join(fresh(), "empty.lock");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "");
    const old = new Date(Date.now() - 5_000);
    utimesSync(path, old, old);
    const lock = await lockFile(path, { sessionId: "s" }, { waitMs: 3_000 });
    await lock.release();
  });

  it("a release never loses to a renewal in flight: the lock file is gone after every release", async () => {
    const { lockFile } = await import("../src/file-lock.js");
    const path = join(fresh(), "renewed.lock");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(path, ".."), { recursive: true });
    const left: number[] = [];
    // A lease of 6 ms is renewed every 2 ms, so releases often meet a renewal half done.
    for (let i = 0; i < 150; i++) {
      const lock = await lockFile(path, { sessionId: "s" }, { ttlMs: 6, waitMs: 3_000 });
      await new Promise((resolve) => setTimeout(resolve, i % 7));
      await lock.release();
      await new Promise((resolve) => setTimeout(resolve, 3));
      if (existsSync(path)) {
        left.push(i);
        rmSync(path);
      }
    }
    expect(left).toEqual([]);
  });
});
