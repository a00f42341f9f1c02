import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  mapChatMessagesToStoredMessages,
} from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { InvalidMessageError, MemoriaError, SEALED_ROLE, createInMemoryStore, decodeMessage, encodeMessage, serializeMessage } from "../src/index.js";
import { encodePayloads } from "../src/message-codec.js";
import { decodeFrozenMessage, decodeMessages, toStoredText } from "../src/store-kit.js";
import { type JsonValue, jsonBytesAtMost } from "../src/json-value.js";
// The testkit's fixture, by path: core cannot depend on the testkit (it depends on core).
import { everyKindOfMessage, fieldsOf } from "../../testkit/src/fixtures.js";

describe("message codec", () => {
  it("round-trips every message class and every field", () => {
    for (const message of everyKindOfMessage()) {
      const viaObject = decodeMessage(encodeMessage(message));
      const viaText = decodeMessage(serializeMessage(message));
      expect(fieldsOf(viaObject)).toEqual(fieldsOf(message));
      expect(fieldsOf(viaText)).toEqual(fieldsOf(message));
      expect(viaObject.constructor).toBe(message.constructor);
    }
  });

  it("stores an AIMessageChunk as the AI message it adds up to", () => {
    const chunk = new AIMessageChunk({ content: "Hel", id: "r1" }).concat(
      new AIMessageChunk({
        content: "lo",
        tool_call_chunks: [{ id: "c1", name: "f", args: '{"a":1}', index: 0, type: "tool_call_chunk" }],
      }),
    );
    const decoded = decodeMessage(serializeMessage(chunk)) as AIMessage;
    expect(decoded).toBeInstanceOf(AIMessage);
    expect(decoded.content).toBe("Hello");
    expect(decoded.tool_calls).toEqual([{ id: "c1", name: "f", args: { a: 1 }, type: "tool_call" }]);
  });

  it("gives back new objects: changing a decoded message changes nothing stored", () => {
    const encoded = encodeMessage(new HumanMessage({ content: "x", additional_kwargs: { a: { b: 1 } } }));
    const first = decodeMessage(encoded);
    (first.additional_kwargs.a as { b: number }).b = 99;
    expect((decodeMessage(encoded).additional_kwargs.a as { b: number }).b).toBe(1);
  });

  it("freezes every object a decoded message reaches, through any own property (decodeFrozenMessage)", () => {
    for (const message of everyKindOfMessage()) {
      const frozen = decodeFrozenMessage(encodeMessage(message));
      expect(fieldsOf(frozen)).toEqual(fieldsOf(message));
      const unfrozen: string[] = [];
      const walk = (value: unknown, path: string) => {
        if (typeof value !== "object" || value === null) return;
        if (!Object.isFrozen(value)) unfrozen.push(path);
        for (const key of Reflect.ownKeys(value)) walk((value as Record<PropertyKey, unknown>)[key], `${path}.${String(key)}`);
      };
      walk(frozen, frozen.getType());
      expect(unfrozen).toEqual([]);
    }
  });

  it("refuses what JSON would change, naming the field", () => {
    const cases: [BaseMessage, string][] = [
      [new HumanMessage({ content: "x", additional_kwargs: { when: new Date() } }), "additional_kwargs.when"],
      [new HumanMessage({ content: "x", additional_kwargs: { n: Number.NaN } }), "additional_kwargs.n"],
      [new HumanMessage({ content: "x", additional_kwargs: { f: () => 1 } }), "additional_kwargs.f"],
      [new HumanMessage({ content: "x", additional_kwargs: { big: 10n } }), "additional_kwargs.big"],
      [new HumanMessage({ content: "x", additional_kwargs: { list: [1, undefined] } }), "additional_kwargs.list[1]"],
    ];
    for (const [message, path] of cases) {
      let error: unknown;
      try {
        encodeMessage(message, 3);
      } catch (e) {
        error = e;
      }
      expect(InvalidMessageError.isInstance(error)).toBe(true);
      expect((error as InvalidMessageError).path).toBe(path);
      expect((error as InvalidMessageError).index).toBe(3);
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeMessage(new HumanMessage({ content: "x", additional_kwargs: cyclic }))).toThrow(/cycle/);
    expect(() => encodeMessage(new RemoveMessage({ id: "x" }))).toThrow(InvalidMessageError);
    expect(() => encodeMessage({ content: "not a message" } as never)).toThrow(InvalidMessageError);
  });

  it("keeps a __proto__ key as plain data", () => {
    const kwargs = JSON.parse('{"__proto__": {"polluted": true}}');
    const decoded = decodeMessage(serializeMessage(new HumanMessage({ content: "x", additional_kwargs: kwargs })));
    expect(Object.keys(decoded.additional_kwargs)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reads what LangChain.js's own stores write (toDict / mapChatMessagesToStoredMessages)", () => {
    for (const message of everyKindOfMessage()) {
      const [stored] = mapChatMessagesToStoredMessages([message]);
      const decoded = decodeMessage(JSON.parse(JSON.stringify(stored)));
      expect(decoded.getType()).toBe(message.getType());
      expect(decoded.content).toEqual(message.content);
      expect(decoded.id).toBe(message.id);
    }
  });

  it("reads LangChain Python's message_to_dict and the old {type, role, text} form", () => {
    const python = {
      type: "ai",
      data: {
        content: "hi",
        additional_kwargs: {},
        response_metadata: {},
        type: "ai",
        name: null,
        id: null,
        example: false,
        tool_calls: [{ name: "f", args: {}, id: "1", type: "tool_call" }],
        invalid_tool_calls: [],
        usage_metadata: null,
      },
    };
    const ai = decodeMessage(python) as AIMessage;
    expect(ai.content).toBe("hi");
    expect(ai.id).toBeUndefined();
    expect(ai.tool_calls?.[0]?.name).toBe("f");
    expect(decodeMessage({ type: "human", role: undefined, text: "old" }).content).toBe("old");
    // PostgresChatMessageHistory stores { ...data, type } in its message column.
    const flattened = decodeMessage({ type: "ai", content: "row", additional_kwargs: {}, response_metadata: { model_name: "m" }, tool_calls: [] }) as AIMessage;
    expect(flattened.content).toBe("row");
    expect(flattened.response_metadata).toEqual({ model_name: "m" });
    expect(decodeMessage({ lc: 1, type: "constructor", id: ["langchain_core", "messages", "HumanMessage"], kwargs: { content: "ser" } }).content).toBe("ser");
  });

  it("fails on unreadable data with CORRUPT_DATA", () => {
    for (const bad of ["not json", "{}", JSON.stringify({ type: "alien", data: {} }), JSON.stringify({ v: 99, type: "human", data: { content: "" } })]) {
      expect(() => decodeMessage(bad)).toThrow(expect.objectContaining({ code: "CORRUPT_DATA" }));
    }
    expect(
      MemoriaError.hasCode(
        catchIt(() => decodeMessage({ type: "tool", data: { content: "x" } })),
        "CORRUPT_DATA",
      ),
    ).toBe(true);
  });

  it("decodes a read's texts in one call, as decodeMessage does each", () => {
    const messages = everyKindOfMessage();
    const stored = [...messages.map((message) => serializeMessage(message)), JSON.stringify(mapChatMessagesToStoredMessages([new HumanMessage("lc")])[0])];
    const decoded = decodeMessages(stored);
    expect(decoded.map(fieldsOf)).toEqual(stored.map((text) => fieldsOf(decodeMessage(text))));
    expect(decoded.map((message) => message.constructor)).toEqual(stored.map((text) => decodeMessage(text).constructor));
    expect(decodeMessages([])).toEqual([]);
  });

  it("takes a sealed record's envelope out without parsing it, giving what parsing gives, and parses any other shape", () => {
    const sealed = (content: string) => serializeMessage(new ChatMessage({ content, role: SEALED_ROLE }));
    const texts = [
      sealed("ms2.A.0.1.0..AbC-_9"), // the shape encryptStore writes: taken out by position
      sealed('ms2.a"b'), // escaped quote
      sealed("ms2.a\\b\nc"), // escaped backslash, newline
      sealed("ms2.é ☃"),
      sealed(""),
      JSON.stringify({ v: 1, type: "generic", data: { role: SEALED_ROLE, content: "ms2.x" } }), // other field order
      '{"v":1,"type":"generic","data":{"content":"ms2.x","id":"y","role":"memoria.sealed"}}', // more fields
      '{"v":1,"type":"generic","data":{"content":"ms2.x","role":"memoria.sealed"}}  ', // trailing space
    ];
    for (const text of texts) {
      const parsed = JSON.parse(text) as { data: { content: string; role: string; id?: string } };
      for (const message of [decodeMessage(text), ...decodeMessages([text])]) {
        expect(message).toBeInstanceOf(ChatMessage);
        expect(fieldsOf(message)).toEqual(fieldsOf(new ChatMessage(parsed.data)));
      }
    }
  });

  it("refuses a read holding anything but JSON text with CORRUPT_DATA, naming what it got", () => {
    const good = serializeMessage(new HumanMessage("fine"));
    for (const [bad, named] of [
      [null, "null"],
      [{ v: 1, type: "human", data: { content: "x" } }, "object"],
      [7, "number"],
      ["{oops", "not valid JSON"],
    ] as const) {
      const error = catchIt(() => decodeMessages([good, bad]));
      expect(MemoriaError.hasCode(error, "CORRUPT_DATA")).toBe(true);
      expect((error as Error).message).toContain(named);
    }
    // JSON text of a string (an envelope's shape, even) is not a message: never taken for a sealed record.
    for (const decode of [(text: string) => decodeMessages([text]), decodeMessage]) {
      const error = catchIt(() => decode('"ms2.A.0.1.0..AbC"'));
      expect(MemoriaError.hasCode(error, "CORRUPT_DATA")).toBe(true);
      expect((error as Error).message).toContain("got string");
    }
  });

  it("keeps a 1 MB message and unicode intact", () => {
    const big = "ü🎉".repeat(350_000);
    expect(decodeMessage(serializeMessage(new HumanMessage(big))).content).toBe(big);
  });
});

function catchIt(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("messages too large to store", () => {
  it("are refused with InvalidMessageError (naming the message), not JavaScript's RangeError", () => {
    // One 100 MiB string referenced six times: over the largest string once serialized.
    const chunk = "x".repeat(100 * 1024 * 1024);
    const error = (() => {
      try {
        toStoredText({ m: Array.from({ length: 6 }, () => chunk) }, 3);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toMatchObject({ code: "INVALID_MESSAGE", index: 3 });
    expect((error as Error).message).toContain("too large to store");
    expect(encodePayloads([new HumanMessage("small")])).toEqual([JSON.stringify(encodeMessage(new HumanMessage("small")))]);
    // Serializing half a gigabyte before the engine gives up takes seconds alone, and
    // over 30 s on a busy two-core machine (seen once in CI): a generous limit, not a timing claim.
  }, 120_000);
});

describe("function messages without a name", () => {
  it("round-trip, so a session holding one stays readable (the classic openai-functions agent makes them)", async () => {
    const unnamed = new FunctionMessage({ content: "42" } as never);
    const back = decodeMessage(JSON.parse(JSON.stringify(encodeMessage(unnamed))));
    expect([back.getType(), back.content, back.name]).toEqual(["function", "42", undefined]);
    const store = createInMemoryStore();
    await store.append({ sessionId: "f" }, [new HumanMessage("q"), unnamed]);
    expect((await store.read({ sessionId: "f" })).map((m) => m.getType())).toEqual(["human", "function"]);
  });
});

describe("jsonBytesAtMost", () => {
  it("is never below the bytes of the JSON text, whatever the value holds", () => {
    const values: JsonValue[] = [
      "",
      "plain",
      '"quotes" and \\ backslashes',
      "\u0000\u0001\u001f controls",
      "\ud800 lone \udfff surrogates",
      "日本語 and 🎉 emoji",
      "\u2028\u2029",
      0,
      -0,
      5e-324,
      -2.2250738585072014e-308,
      1.7976931348623157e308,
      -123456789.12345678,
      -0.0000022218350844463083,
      -3.0161153305827114e21,
      true,
      false,
      null,
      [],
      {},
      [[[]], {}, null],
      { "": "", "\u0000": "\ud83d", 'k"e\\y': ["\u001f", 1e21, { nested: [true, "🎉"] }] },
    ];
    for (const value of [...values, values]) {
      expect(jsonBytesAtMost(value)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(value)));
    }
    // numbers of every magnitude, at full precision
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed - 1) / 2147483646;
    };
    for (let i = 0; i < 20_000; i++) {
      const value = -(random() + 1e-9) * 10 ** (Math.floor(random() * 60) - 30);
      expect(jsonBytesAtMost(value)).toBeGreaterThanOrEqual(JSON.stringify(value).length);
    }
    // and every encoded message of each kind
    for (const message of everyKindOfMessage()) {
      const encoded = encodeMessage(message) as unknown as JsonValue;
      expect(jsonBytesAtMost(encoded)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(encoded)));
    }
  });

  it("grows with the text, not with a constant", () => {
    expect(jsonBytesAtMost("x".repeat(1_000))).toBeGreaterThanOrEqual(1_002);
    expect(jsonBytesAtMost({ content: "x".repeat(1_000) })).toBeLessThan(10_000);
  });
});

describe("fields left out when empty", () => {
  it("leaves out an empty list or plain object, and still refuses an empty object that JSON would change", () => {
    const plain = encodeMessage(new AIMessage({ content: "x", additional_kwargs: Object.create(null), response_metadata: {}, tool_calls: [] }));
    expect(Object.keys(plain.data)).toEqual(["content"]);
    // empty once copied: a key holding undefined is not kept, so the field is left out as well
    const hollow = encodeMessage(new AIMessage({ content: "x", response_metadata: { model: undefined } }));
    expect(Object.keys(hollow.data)).toEqual(["content"]);
    for (const odd of [new (class Options {})(), new Map(), new Date(0)]) {
      const message = new AIMessage({ content: "x", additional_kwargs: {} });
      (message as unknown as { additional_kwargs: unknown }).additional_kwargs = odd;
      expect(() => encodeMessage(message)).toThrow(InvalidMessageError);
    }
  });
});
