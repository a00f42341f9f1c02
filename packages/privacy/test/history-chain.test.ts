import { randomBytes } from "node:crypto";
import { type BaseMessage, ChatMessage, HumanMessage } from "@langchain/core/messages";
import { createInMemoryStore, encodeSessionKey } from "@memoria/core";
import { encodeMessages, toStoredText } from "@memoria/core/store-kit";
import { describe, expect, it } from "vitest";
import { DataKeys } from "../src/data-keys.js";
import { KeyRing } from "../src/key-ring.js";
import { seal } from "../src/seal.js";
import { parseSealedMessage } from "../src/sealed-records.js";
import { SEALED_ROLE, type FreshnessAnchor, encryptStore, storeAnchor } from "../src/index.js";

const keys = { A: randomBytes(32) };
const options = { keys, activeKeyId: "A" };
const words = (messages: BaseMessage[]) => messages.map((m) => String(m.content));

describe("sealed history", () => {
  it("reads records of the first format (no chain) and chains new records onto them", async () => {
    const inner = createInMemoryStore();
    const key = { sessionId: "old" };
    await encryptStore(inner, options).setState(key, "summary", "made the data key");
    const dataKey = (await new DataKeys(inner, new KeyRing(keys, "A"), 10).fetch(key, key))!;
    const stored = encodeSessionKey(key);
    // As the previous release sealed them: ms1.<data key id>.<position>.<sealed>, bound to the session and position.
    const v1 = encodeMessages([new HumanMessage("one"), new HumanMessage("two")]).map((message, position) => {
      const sealed = seal(dataKey.key, Buffer.from(toStoredText(message, position)), `memoria.message|${stored}|${position}`);
      return new ChatMessage({ role: SEALED_ROLE, content: `ms1.${dataKey.id}.${position}.${sealed}` });
    });
    await inner.append(key, v1);
    expect(words(await encryptStore(inner, options).read(key))).toEqual(["one", "two"]);
    await encryptStore(inner, options).append(key, [new HumanMessage("three")]);
    expect(words(await encryptStore(inner, options).read(key))).toEqual(["one", "two", "three"]);
    const raw = await inner.read(key, { sealed: true });
    expect(String(raw[2]!.content)).toMatch(/^ms2\./);
    // A first-format record after a chained one was not written by memoria.
    const late = seal(dataKey.key, Buffer.from(toStoredText(encodeMessages([new HumanMessage("late")])[0]!, 3)), `memoria.message|${stored}|3`);
    await inner.append(key, [new ChatMessage({ role: SEALED_ROLE, content: `ms1.${dataKey.id}.3.${late}` })]);
    await expect(encryptStore(inner, options).read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "mixed" });
  });

  it("carries an edit's mark through rekey: with the old master key dropped, the replaced records are still refused", async () => {
    const inner = createInMemoryStore();
    const keyB = randomBytes(32);
    const key = { sessionId: "edited" };
    const underA = encryptStore(inner, options);
    await underA.append(key, [new HumanMessage("q1"), new HumanMessage("a1")]);
    await underA.append(key, [new HumanMessage("q2"), new HumanMessage("a2")]);
    const before = await inner.read(key, { sealed: true });
    await underA.replaceTail(key, { from: 2, count: 4, messages: [new HumanMessage("q2, edited")] });
    const both = encryptStore(inner, { keys: { ...keys, B: keyB }, activeKeyId: "B" });
    expect(await both.rekey()).toEqual({ seen: 1, rewrapped: 1 });
    const onlyB = encryptStore(inner, { keys: { B: keyB }, activeKeyId: "B" });
    expect(words(await onlyB.read(key))).toEqual(["q1", "a1", "q2, edited"]);
    const record = await inner.getState(key, "memoria.datakey");
    await inner.clear(key);
    await inner.setState(key, "memoria.datakey", record!);
    await inner.append(key, before);
    await expect(encryptStore(inner, { keys: { B: keyB }, activeKeyId: "B" }).read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
  });

  it("anchors a turn with one call alongside the read and one after the write, and says so when the anchor fails", async () => {
    const inner = createInMemoryStore();
    const heads = storeAnchor(createInMemoryStore());
    const calls: string[] = [];
    let failing: "get" | "set" | undefined;
    const anchor: FreshnessAnchor = {
      get: async (session, item) => {
        calls.push(`get ${item}`);
        if (failing === "get") throw new Error("anchor down");
        return heads.get(session, item);
      },
      set: async (session, item, value) => {
        calls.push(`set ${item}`);
        if (failing === "set") throw new Error("anchor down");
        return heads.set(session, item, value);
      },
    };
    const store = encryptStore(inner, { ...options, anchor });
    const key = { sessionId: "anchored" };
    await store.read(key);
    await store.append(key, [new HumanMessage("hi")]);
    expect(calls).toEqual(["get messages", "set messages"]);
    failing = "set";
    const lost = await store.append(key, [new HumanMessage("stored anyway")]).catch((e: unknown) => e);
    expect(lost).toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "unknown" });
    expect(await inner.count(key)).toBe(2); // the write was stored; the anchor is behind, never ahead
    failing = "get";
    await expect(store.read(key)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await expect(store.getState(key, "summary")).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    failing = undefined;
    expect(words(await encryptStore(inner, { ...options, anchor }).read(key))).toEqual(["hi", "stored anyway"]);
    await store.setState(key, "summary", 1);
    await store.setState(key, "summary", 2);
    expect(await heads.get(encodeSessionKey(key), "state.summary")).toMatch(/\.2$/); // versions go up one per write
    expect(() => storeAnchor(undefined as never)).toThrow(/storeAnchor needs a store/);
  });
});

describe("sealed envelopes", () => {
  const key = { sessionId: "s" };
  const record = (content: string) => new ChatMessage({ role: SEALED_ROLE, content });

  it("read their fields: data key id, position, end, edit, link and where the sealed text starts", () => {
    const content = "ms2.K1.12.13.2.LINKxyz.SEALED";
    expect(parseSealedMessage(key, record(content))).toEqual({
      envelope: content,
      dataKeyId: "K1",
      position: 12,
      end: 13,
      edit: 2,
      link: "LINKxyz",
      sealedAt: content.indexOf("SEALED"),
    });
    expect(parseSealedMessage(key, record("ms2.K.0.0.0..S"))).toMatchObject({ position: 0, end: 0, edit: 0, link: "" });
    expect(parseSealedMessage(key, record("ms1.K.7.S"))).toMatchObject({ dataKeyId: "K", position: 7, end: 7, edit: 0, sealedAt: 8 });
    expect(parseSealedMessage(key, record("ms1.K.7.S")).link).toBeUndefined();
  });

  it("that are malformed are tampered: a field missing or empty, a number with a sign, a leading zero or a letter, an end before the position", () => {
    for (const content of [
      "ms2.K.1.1.0.L.",
      "ms2.K.1.1.0.L",
      "ms2..1.1.0.L.S",
      "ms2.K..1.0.L.S",
      "ms2.K.01.1.0.L.S",
      "ms2.K.1.1.-1.L.S",
      "ms2.K.1.1.0x.L.S",
      "ms2.K.2.1.0.L.S",
      "ms2.K.1.1e1.0.L.S",
      "ms1.K.1.",
      "ms1.K.x.S",
      "ms1.K.1234567890123456.S",
    ]) {
      expect(() => parseSealedMessage(key, record(content)), content).toThrow(expect.objectContaining({ code: "INTEGRITY", reason: "tampered" }));
    }
    for (const message of [record("plain text"), new HumanMessage("ms2.K.1.1.0.L.S")]) {
      expect(() => parseSealedMessage(key, message)).toThrow(expect.objectContaining({ code: "INTEGRITY", reason: "not-sealed" }));
    }
  });
});
