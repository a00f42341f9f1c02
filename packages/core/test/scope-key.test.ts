import { describe, expect, it } from "vitest";
import { InvalidSessionKeyError, SCOPE_FIELD, createSessionKey, scopeFilterOf, scopeKeyOf } from "../src/index.js";
import { listedBy, withoutScopes } from "../src/scope-key.js";
import { checkScopeFields, validateSessionFields } from "../src/store-kit.js";

describe("scope keys", () => {
  it("names a scope record by the scope's fields, in a canonical order", () => {
    expect(scopeKeyOf({ userId: "ada" })).toEqual({ userId: "ada", [SCOPE_FIELD]: "userId" });
    expect(scopeKeyOf({ userId: "ada", orgId: "o1" })).toEqual(scopeKeyOf({ orgId: "o1", userId: "ada" }));
    expect(scopeKeyOf({ orgId: "o1", userId: "ada" })[SCOPE_FIELD]).toBe("orgId+userId");
    expect(() => scopeKeyOf({})).toThrow(/at least one field/);
  });

  it("takes a session's scope from its key, and says which field is missing", () => {
    const key = createSessionKey({ userId: "ada", conversationId: "c1" });
    expect(scopeFilterOf(key, ["userId"])).toEqual({ userId: "ada" });
    const error = (() => {
      try {
        scopeFilterOf(key, ["tenantId"]);
      } catch (caught) {
        return caught;
      }
    })();
    expect(InvalidSessionKeyError.isInstance(error)).toBe(true);
    expect((error as InvalidSessionKeyError).field).toBe("tenantId");
  });

  it("reserves the scope field: it cannot be a session field or scope a memory", () => {
    expect(() => validateSessionFields(["userId", SCOPE_FIELD])).toThrow(/reserved/);
    expect(() => checkScopeFields([SCOPE_FIELD], "factMemory")).toThrow(/reserved/);
    expect(() => checkScopeFields([], "factMemory")).toThrow(/non-empty/);
    expect(() => checkScopeFields(["userId", "userId"], "factMemory")).toThrow(/twice/);
    expect(checkScopeFields(["userId", "orgId"], "x")).toEqual(["orgId", "userId"]);
  });

  it("hides scope records from listings unless asked for them", () => {
    const record = scopeKeyOf({ userId: "ada" });
    const conversation = createSessionKey({ userId: "ada", conversationId: "c1" });
    expect(listedBy(record, { userId: "ada" })).toBe(false);
    expect(listedBy(conversation, { userId: "ada" })).toBe(true);
    expect(listedBy(record, { [SCOPE_FIELD]: "userId" })).toBe(true);
    expect(withoutScopes([record, conversation], (key) => key, { userId: "ada" })).toEqual([conversation]);
    expect(withoutScopes([record, conversation], (key) => key, { [SCOPE_FIELD]: "userId" })).toHaveLength(2);
  });
});
