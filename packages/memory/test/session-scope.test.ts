import { createSessionKey, encodeSessionKey, scopeKeyOf } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { scopeOfSession } from "../src/long-term/session-scope.js";

describe("a session's scope, worked out once per turn's key", () => {
  it("gives a frozen key's scope again without working it out, by the fields that scope it", () => {
    const key = createSessionKey({ userId: "ada@example.com", conversationId: "c1" });
    const byUser = scopeOfSession(key, ["userId"]);
    expect(byUser).toEqual({
      filter: { userId: "ada@example.com" },
      key: scopeKeyOf({ userId: "ada@example.com" }),
      id: encodeSessionKey(scopeKeyOf({ userId: "ada@example.com" })),
    });
    expect(scopeOfSession(key, ["userId"])).toBe(byUser);
    const whole = scopeOfSession(key, undefined);
    expect(whole.filter).toEqual({ userId: "ada@example.com", conversationId: "c1" });
    expect(whole).not.toBe(byUser);
    expect(scopeOfSession(key, undefined)).toBe(whole);
  });

  it("gives a conversation's next key object the scope worked out for the last one, by fields", () => {
    const first = scopeOfSession(createSessionKey({ userId: "grace", conversationId: "c1" }), ["userId"]);
    const next = createSessionKey({ userId: "grace", conversationId: "c1" });
    expect(scopeOfSession(next, ["userId"])).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(scopeOfSession(next, undefined)).not.toBe(first);
    expect(scopeOfSession(next, undefined).filter).toEqual({ userId: "grace", conversationId: "c1" });
    expect(scopeOfSession(createSessionKey({ userId: "grace", conversationId: "c2" }), ["userId"]).id).toBe(first.id);
    expect(scopeOfSession(createSessionKey({ userId: "linus", conversationId: "c1" }), ["userId"]).filter).toEqual({ userId: "linus" });
  });

  it("works a key that can change out every time, so a changed key never gets a stale scope", () => {
    const key = { userId: "ada", conversationId: "c1" };
    expect(scopeOfSession(key, ["userId"]).filter).toEqual({ userId: "ada" });
    key.userId = "bob";
    expect(scopeOfSession(key, ["userId"]).filter).toEqual({ userId: "bob" });
  });

  it("refuses a key without a field the memory is scoped to", () => {
    expect(() => scopeOfSession(createSessionKey({ conversationId: "c1" }), ["userId"])).toThrow(/userId/);
  });
});
