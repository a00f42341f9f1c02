import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { decodeFrozenMessage, encodeMessages } from "@memoria/core/store-kit";
import { transcript } from "@memoria/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { createFileStore } from "../src/index.js";
import { TailCache, lastMessages } from "../src/tail-cache.js";

const root = mkdtempSync(join(tmpdir(), "memoria-tail-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A session file of `turns` two-message turns, each line about `pad` bytes longer than bare. */
function sessionFile(turns: number, pad = 0): string {
  const file = join(root, `s${++n}.jsonl`);
  const lines = [JSON.stringify({ memoria: 1, key: { sessionId: `s${n}` } })];
  for (let i = 0; i < turns; i++) {
    const m = encodeMessages([new HumanMessage(`q${i}${" ".repeat(pad)}`), new AIMessage(`a${i}`)]);
    lines.push(JSON.stringify({ t: `t${i}`, n: 2 * (i + 1), m }));
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

async function readAll(cache: TailCache, file: string) {
  return lastMessages(await cache.read(file, statSync(file), Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
}

describe("tail cache", () => {
  it("shares one frozen decoding of each cached message among reads, each in a new array", async () => {
    const cache = new TailCache({ files: 10, bytesPerFile: 1 << 20, bytes: 1 << 20, share: decodeFrozenMessage });
    const file = sessionFile(3);
    const first = await readAll(cache, file);
    const cached = cache.cached(file, statSync(file), Number.POSITIVE_INFINITY);
    const second = lastMessages(cached ?? [], Number.POSITIVE_INFINITY);
    expect(transcript(second)).toEqual(["human: q0", "ai: a0", "human: q1", "ai: a1", "human: q2", "ai: a2"]);
    expect(second).not.toBe(first);
    for (const [i, message] of second.entries()) expect(message).toBe(first[i]);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(() => Object.assign(first[0] as object, { content: "changed" })).toThrow(TypeError);
  });

  it("without sharing, decodes new copies for every read", async () => {
    const cache = new TailCache({ files: 10, bytesPerFile: 1 << 20, bytes: 1 << 20 });
    const file = sessionFile(2);
    const [first, second] = [await readAll(cache, file), await readAll(cache, file)];
    expect(transcript(second)).toEqual(transcript(first));
    expect(second[0]).not.toBe(first[0]);
    expect(Object.isFrozen(first[0])).toBe(false);
  });

  it("shares only the turns it keeps: older ones, past the per-file budget, come as copies nothing keeps", async () => {
    const cache = new TailCache({ files: 10, bytesPerFile: 2_000, bytes: 1 << 20, share: decodeFrozenMessage });
    const file = sessionFile(20, 200); // about 300 bytes a line: the last 6 turns fit
    const messages = await readAll(cache, file);
    expect(messages).toHaveLength(40);
    const frozen = messages.map((message) => Object.isFrozen(message));
    const firstShared = frozen.indexOf(true);
    expect(firstShared).toBeGreaterThan(0);
    expect(frozen.slice(firstShared).every(Boolean)).toBe(true);
    expect(frozen.slice(0, firstShared).some(Boolean)).toBe(false);
    // The kept turns answer a window without touching the file; they are the same objects.
    const window = lastMessages(cache.cached(file, statSync(file), 4) ?? [], 4);
    for (const [i, message] of window.entries()) expect(message).toBe(messages[36 + i]);
  });

  it("leaves a turn it cannot decode in codec form: a window past it still reads, a read that needs it fails as before", async () => {
    const cache = new TailCache({ files: 10, bytesPerFile: 1 << 20, bytes: 1 << 20, share: decodeFrozenMessage });
    const file = sessionFile(3);
    const lines = readFileSync(file, "utf8").split("\n");
    // The middle turn's first message is not a message; the last three messages do not include it.
    lines[2] = JSON.stringify({
      t: "t1",
      n: 4,
      m: [
        { v: 1, type: "nonsense", data: { content: "?" } },
        { v: 1, type: "ai", data: { content: "a1" } },
      ],
    });
    writeFileSync(file, lines.join("\n"));
    const window = lastMessages(await cache.read(file, statSync(file), 3), 3);
    expect(transcript(window)).toEqual(["ai: a1", "human: q2", "ai: a2"]);
    expect(window.map((message) => Object.isFrozen(message))).toEqual([false, true, true]);
    await expect(readAll(cache, file)).rejects.toMatchObject({ code: "CORRUPT_DATA" });
  });

  it("drops the least recently read files past its total budget, and reads what a file gained since", async () => {
    const cache = new TailCache({ files: 10, bytesPerFile: 10_000, bytes: 2_500, share: decodeFrozenMessage });
    const files = [sessionFile(10), sessionFile(10), sessionFile(10)]; // about 1,100 bytes of turns each
    for (const file of files) await readAll(cache, file);
    const current = files.map((file) => cache.cached(file, statSync(file), Number.POSITIVE_INFINITY) !== undefined);
    expect(current).toEqual([false, true, true]);
    const grown = files[2] as string;
    const before = await readAll(cache, grown);
    const m = encodeMessages([new HumanMessage("late")]);
    appendFileSync(grown, `${JSON.stringify({ t: "late", n: 21, m })}\n`);
    expect(cache.cached(grown, statSync(grown), Number.POSITIVE_INFINITY)).toBeUndefined();
    const after = await readAll(cache, grown);
    expect(transcript(after).at(-1)).toBe("human: late");
    // Only the new line was read and decoded: the earlier messages are the same objects, and the new one is shared too.
    for (const [i, message] of before.entries()) expect(after[i]).toBe(message);
    expect(Object.isFrozen(after.at(-1))).toBe(true);
  });
});

describe("file store reads", () => {
  it("by default hand every read the same frozen messages; with frozen: false, copies; both see another instance's append", async () => {
    for (const frozen of [true, false]) {
      const directory = join(root, `store-${++n}`);
      const [store, peer] = [createFileStore({ directory, frozen }), createFileStore({ directory })];
      const key = { sessionId: "shared" };
      await store.append(key, [new HumanMessage("hi"), new AIMessage("hello")]);
      const [first, second] = [await store.read(key), await store.read(key)];
      expect(second).not.toBe(first);
      expect(second[1] === first[1]).toBe(frozen);
      expect(Object.isFrozen(second[1])).toBe(frozen);
      await peer.append(key, [new HumanMessage("from the peer")]);
      expect(transcript(await store.read(key))).toEqual(["human: hi", "ai: hello", "human: from the peer"]);
      await Promise.all([store.close(), peer.close()]);
    }
  });

  it("refuses a frozen option that is not a boolean", () => {
    expect(() => createFileStore({ directory: join(root, "bad"), frozen: "yes" as never })).toThrow(/frozen must be true or false, got yes/);
  });
});
