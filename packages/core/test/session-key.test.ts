import { describe, expect, it } from "vitest";
import {
  InvalidSessionKeyError,
  MemoriaError,
  createKeyFilter,
  createSessionKey,
  decodeSessionKey,
  encodeSessionKey,
  keyMatches,
  sessionKeyFromConfig,
} from "../src/index.js";
import { sessionKeyId } from "../src/session-key.js";
import { validateSessionFields } from "../src/store-kit.js";

describe("session keys", () => {
  it("reads the named fields from configurable, in field order", () => {
    const key = sessionKeyFromConfig({ conversationId: "c", userId: "u", other: 1 }, ["userId", "conversationId"]);
    expect(Object.keys(key)).toEqual(["userId", "conversationId"]);
    expect(Object.isFrozen(key)).toBe(true);
    expect(Object.getPrototypeOf(key)).toBeNull();
  });

  it("hands out the same frozen key for the same values read again, and checks every new value", () => {
    const fields = validateSessionFields(["userId", "conversationId"]);
    const first = sessionKeyFromConfig({ userId: "u", conversationId: "c" }, fields);
    expect(sessionKeyFromConfig({ conversationId: "c", userId: "u" }, fields)).toBe(first);
    expect(sessionKeyFromConfig({ userId: "u", conversationId: "d" }, fields)).not.toBe(first);
    expect(sessionKeyFromConfig({ userId: "u", conversationId: "d" }, fields)).toEqual({ userId: "u", conversationId: "d" });
    // A value that would join into a cached one's text is still checked, and refused.
    expect(() => sessionKeyFromConfig({ userId: "u\u0000c", conversationId: "" }, fields)).toThrow(/control character/);
    expect(() => sessionKeyFromConfig({ userId: "u" }, fields)).toThrow(/conversationId/);
    // A whole number is its decimal string, as before: the same session as the string.
    expect(sessionKeyFromConfig({ sessionId: 42 })).toEqual({ sessionId: "42" });
    expect(sessionKeyFromConfig({ sessionId: "42" })).toEqual({ sessionId: "42" });
    // Past its bound it starts over: every key still names its own values.
    for (let i = 0; i < 2500; i++) expect(sessionKeyFromConfig({ sessionId: `s${i}` }).sessionId).toBe(`s${i}`);
  });

  it("reads each value of the config once, so a getter cannot pass the check with one value and key another", () => {
    let reads = 0;
    const configurable = {
      get sessionId() {
        reads++;
        return reads === 1 ? "checked" : "bad\u0000value";
      },
    };
    expect(sessionKeyFromConfig(configurable)).toEqual({ sessionId: "checked" });
    expect(reads).toBe(1);
  });

  it.each([
    ["", "it is empty"],
    ["x".repeat(257), "257 characters"],
    ["tab\there", "control character"],
    ["nul\u0000", "control character"],
    ["line\u2028sep", "control character"],
    ["\ud800lone", "unpaired surrogate"],
  ])("rejects %j naming the field and the reason", (value, reason) => {
    let error: unknown;
    try {
      sessionKeyFromConfig({ sessionId: value });
    } catch (e) {
      error = e;
    }
    expect(InvalidSessionKeyError.isInstance(error)).toBe(true);
    expect((error as InvalidSessionKeyError).field).toBe("sessionId");
    expect((error as Error).message).toContain(reason);
  });

  it("accepts 256 characters, unicode and punctuation", () => {
    for (const value of ["x".repeat(256), "日本語 🎉", "../../etc/passwd", "a:b{c}*d e", "__proto__"]) {
      expect(sessionKeyFromConfig({ sessionId: value }).sessionId).toBe(value);
    }
  });

  it("refuses field names that could reach a prototype", () => {
    for (const field of ["__proto__", "constructor", "prototype", "1abc", "a-b", ""]) {
      expect(() => createSessionKey({ [field]: "x" })).toThrow(InvalidSessionKeyError);
    }
    expect(() => validateSessionFields(["userId", "userId"])).toThrow(MemoriaError);
    expect(() => validateSessionFields([])).toThrow(MemoriaError);
  });

  it("does not let a __proto__ value pollute anything", () => {
    const parsed = JSON.parse('{"sessionId": "s", "__proto__": {"polluted": "yes"}}');
    const key = sessionKeyFromConfig(parsed);
    expect(Object.keys(key)).toEqual(["sessionId"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("encodes canonically: field order does not matter, different keys never collide", () => {
    const a = encodeSessionKey(createSessionKey({ userId: "u", conversationId: "c" }));
    const b = encodeSessionKey(createSessionKey({ conversationId: "c", userId: "u" }));
    expect(a).toBe(b);
    const tricky = [{ sessionId: "a&b=c" }, { sessionId: "a", b: "c" }, { sessionId: "a%26b%3Dc" }, { sessionId: "a b" }, { sessionId: "a+b" }].map((k) =>
      encodeSessionKey(createSessionKey(k)),
    );
    expect(new Set(tricky).size).toBe(tricky.length);
    for (const encoded of tricky) expect(encoded).toMatch(/^[A-Za-z0-9_.%=&-]+$/);
  });

  it("decodes what it encodes", () => {
    const key = createSessionKey({ userId: "ünï/cødé", conversationId: "../x y" });
    expect(decodeSessionKey(encodeSessionKey(key))).toEqual(key);
  });

  it("hands out one frozen key for an encoding decoded again, and refuses a bad encoding every time", () => {
    const encoded = encodeSessionKey(createSessionKey({ userId: "u-again", conversationId: "c 1" }));
    const first = decodeSessionKey(encoded);
    expect(Object.isFrozen(first)).toBe(true);
    expect(decodeSessionKey(encoded)).toBe(first);
    expect(encodeSessionKey(first)).toBe(encoded);
    for (let i = 0; i < 2; i++) {
      expect(() => decodeSessionKey("userId")).toThrow(/Not an encoded session key/);
      expect(() => decodeSessionKey("userId=%0A")).toThrow(InvalidSessionKeyError);
    }
    // Past the cache's bound (1,024), every key still decodes to its own fields, the first one too.
    for (let i = 0; i < 3_000; i++) expect(decodeSessionKey(`sessionId=s${i}`).sessionId).toBe(`s${i}`);
    expect(decodeSessionKey(encoded)).toEqual(first);
  });

  it("matches filters on any field", () => {
    const key = createSessionKey({ userId: "u1", conversationId: "c1" });
    expect(keyMatches(key, createKeyFilter({ userId: "u1" }))).toBe(true);
    expect(keyMatches(key, createKeyFilter({ userId: "u2" }))).toBe(false);
    expect(keyMatches(key, createKeyFilter({}))).toBe(true);
    expect(() => createKeyFilter({ userId: 5 } as never)).toThrow(InvalidSessionKeyError);
  });

  it("sessionKeyId gives what encodeSessionKey(createSessionKey(…)) gives, and refuses what it refuses, with the same error", () => {
    const values = ["plain-id_1.x", "../../etc/passwd", "with space", "__proto__", "%2e%2e", "ÄÖÜ-日本-🎉", "x".repeat(256)];
    const records: Record<string, unknown>[] = [
      ...values.map((value) => ({ sessionId: value })),
      { userId: "u", conversationId: "c/1" },
      createSessionKey({ sessionId: "already validated" }),
      Object.assign(Object.create(null), { sessionId: "no prototype" }),
      { sessionId: "plain-id_1.x" }, // a second time, once its field name is known good
    ];
    for (const record of records) expect(sessionKeyId(record)).toBe(encodeSessionKey(createSessionKey(record)));
    const invalid: unknown[] = [
      { sessionId: "" },
      { sessionId: "line\nbreak" },
      { sessionId: "x".repeat(257) },
      { sessionId: 42 },
      { sessionId: "\ud800" },
      { "bad-field": "v" },
      { constructor: "v" },
      JSON.parse('{"__proto__": "v"}'),
      { sessionId: "plain", userId: "" },
      {},
      null,
      ["a"],
    ];
    for (const record of invalid) {
      let slow: unknown;
      try {
        encodeSessionKey(createSessionKey(record as Record<string, unknown>));
      } catch (error) {
        slow = error;
      }
      expect(slow, JSON.stringify(record)).toBeInstanceOf(InvalidSessionKeyError);
      expect(() => sessionKeyId(record as Record<string, unknown>)).toThrow((slow as Error).message);
    }
  });
});
