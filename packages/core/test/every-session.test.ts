import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { SCOPE_FIELD, createInMemoryStore, everySession, scopeKeyOf } from "../src/index.js";

async function all(iterable: AsyncIterable<Record<string, string>>) {
  const out: Record<string, string>[] = [];
  for await (const key of iterable) out.push({ ...key });
  return out;
}

describe("everySession", () => {
  it("walks the sessions, then the scope records their fields can have, and the named scopes no session shares", async () => {
    const store = createInMemoryStore();
    await store.append({ userId: "ada", conversationId: "c1" }, [new HumanMessage("hi")]);
    await store.setState(scopeKeyOf({ userId: "ada" }), "facts", 1);
    await store.setState(scopeKeyOf({ userId: "ada", teamId: "t1" }), "facts", 2);
    await store.setState(scopeKeyOf({ userId: "bob" }), "facts", 3);
    const found = await all(everySession(store, { userId: "ada" }, { pageSize: 1 }));
    expect(found).toEqual([
      { userId: "ada", conversationId: "c1" },
      { userId: "ada", [SCOPE_FIELD]: "userId" },
    ]);
    const named = await all(everySession(store, { userId: "ada" }, { scopes: [["userId", "teamId"]] }));
    expect(named).toContainEqual({ userId: "ada", teamId: "t1", [SCOPE_FIELD]: "teamId+userId" });
    expect(named).toHaveLength(3);
    expect((await all(everySession(store))).filter((key) => key[SCOPE_FIELD])).toHaveLength(2); // ada's and bob's "userId" scopes
    await expect(all(everySession(store, {}, { scopes: [[SCOPE_FIELD]] }))).rejects.toThrow(/reserved/);
  });
});
