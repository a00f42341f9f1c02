import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type HistoryStore, branchSession, editSession } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { everyKindOfMessage, fieldsOf, numbered, randomKey, transcript } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/** question, a tool call, its result, the answer, a follow-up question, its answer. */
function withToolCall() {
  return [
    new HumanMessage("weather in Paris?"),
    new AIMessage({ content: "", tool_calls: [{ id: "call_w", name: "weather", args: { city: "Paris" }, type: "tool_call" }] }),
    new ToolMessage({ content: "18°C", tool_call_id: "call_w", name: "weather" }),
    new AIMessage("It is 18°C."),
    new HumanMessage("and tomorrow?"),
    new AIMessage("Rain."),
  ];
}

/** Edits (delete, replace, truncate), branches, and what they do to derived state. */
export function editsSuite(setup: StoreSuiteSetup): void {
  describe(`${setup.name}: edit and branch`, () => {
    const store = useStore(setup);
    const editable = (): HistoryStore => {
      if (!store().replaceTail) throw new Error(`${store().name}: replaceTail is missing`);
      return store();
    };

    it("deletes one message, replaces one in place, and truncates after a message (regenerate)", async () => {
      const key = randomKey();
      await editable().append(key, numbered(6));
      expect(await editSession(store(), key, { op: "delete", at: 2 })).toMatchObject({ count: 5, removed: 4, added: 3 });
      expect(transcript(await store().read(key))).toEqual(["human: m0", "human: m1", "human: m3", "human: m4", "human: m5"]);
      // A window reaching past the edited tail: stores that number messages keep going across the gap the delete left.
      expect(transcript(await store().read(key, { last: 4 }))).toEqual(["human: m1", "human: m3", "human: m4", "human: m5"]);
      const replacement = everyKindOfMessage()[2] as AIMessage; // an AI message with every field; it makes a tool call, allowed as the last message only
      await editSession(store(), key, {
        op: "replace",
        at: 1,
        message: new AIMessage({ content: "edited ✓", id: "ai-edited", response_metadata: { edited: true } }),
      });
      await editSession(store(), key, { op: "replace", at: 4, message: replacement });
      const read = await store().read(key);
      expect(transcript(read)).toEqual(["human: m0", "ai: edited ✓", "human: m3", "human: m4", "ai: "]);
      expect(fieldsOf(read[4] as AIMessage)).toEqual(fieldsOf(replacement));
      expect(await store().count(key)).toBe(5);
      expect(transcript(await store().read(key, { last: 2 }))).toEqual(["human: m4", "ai: "]);
      expect(await editSession(store(), key, { op: "truncate", after: 3 })).toMatchObject({ count: 4, removed: 1, added: 0 });
      await store().append(key, [new AIMessage("a regenerated answer")]);
      expect(transcript(await store().read(key, { last: 2 }))).toEqual(["human: m4", "ai: a regenerated answer"]);
      await editSession(store(), key, { op: "truncate", after: -1 });
      expect(await store().read(key)).toEqual([]);
    });

    it("never leaves a tool call without its result", async () => {
      const key = randomKey();
      await editable().append(key, withToolCall());
      const before = transcript(await store().read(key));
      const conflicts = [
        { op: "delete", at: 2 }, // the result alone
        { op: "truncate", after: 1 }, // between the call and its result
        { op: "replace", at: 1, message: new AIMessage("no call any more") },
        { op: "replace", at: 2, message: new ToolMessage({ content: "x", tool_call_id: "call_other" }) },
      ] as const;
      for (const edit of conflicts) await expect(editSession(store(), key, edit)).rejects.toMatchObject({ code: "EDIT_CONFLICT" });
      expect(transcript(await store().read(key))).toEqual(before);
      // Deleting the call removes its result with it.
      await editSession(store(), key, { op: "delete", at: 1 });
      expect(transcript(await store().read(key))).toEqual(["human: weather in Paris?", "ai: It is 18°C.", "human: and tomorrow?", "ai: Rain."]);
    });

    it("refuses bad positions, and a tail replacement planned on a session that changed, writing nothing", async () => {
      const key = randomKey();
      await editable().append(key, numbered(3));
      for (const edit of [
        { op: "delete", at: 3 },
        { op: "delete", at: -1 },
        { op: "replace", at: 1.5, message: new HumanMessage("x") },
        { op: "truncate", after: 3 },
        { op: "move" },
      ]) {
        await expect(editSession(store(), key, edit as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      }
      await expect(store().replaceTail(key, { from: 1, count: 2, messages: [new HumanMessage("x")] })).rejects.toMatchObject({ code: "EDIT_CONFLICT" });
      await expect(store().replaceTail(key, { from: 4, count: 3, messages: [] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(transcript(await store().read(key))).toEqual(transcript(numbered(3)));
    });

    it("refuses an edit under a lock the session no longer holds, writing nothing", async () => {
      const key = randomKey();
      await editable().append(key, numbered(3));
      const lock = await store().lock(key);
      await store().clear(key); // erasure takes the lock away
      await store().append(key, numbered(3));
      await expect(store().replaceTail(key, { from: 0, count: 3, messages: [] }, { lock })).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(await store().count(key)).toBe(3);
      await lock.release();
    });

    it("resets derived state that read an edited message, keeps the rest, and refuses to edit inside a compacted summary", async () => {
      const key = randomKey();
      await editable().append(key, numbered(6));
      await store().setState(key, "summary", { summary: "first four", folded: 4, trimmed: 0 });
      await store().setState(key, "entities", { entities: {}, processed: 2 });
      await store().setState(key, "profile", { name: "Ada" });
      const result = await editSession(store(), key, { op: "replace", at: 3, message: new AIMessage("changed") });
      expect(result.reset).toEqual(["summary"]);
      expect(await store().getState(key, "summary")).toBeNull();
      expect(await store().getState(key, "entities")).toEqual({ entities: {}, processed: 2 });
      expect(await store().getState(key, "profile")).toEqual({ name: "Ada" });
      expect((await editSession(store(), key, { op: "truncate", after: 4 })).reset).toEqual([]);

      const compacted = randomKey();
      await store().append(compacted, numbered(4));
      await store().setState(compacted, "summary", { summary: "five folded, two trimmed", folded: 5, trimmed: 2 });
      await expect(editSession(store(), compacted, { op: "delete", at: 1 })).rejects.toMatchObject({ code: "EDIT_CONFLICT" });
      await editSession(store(), compacted, { op: "delete", at: 3 }); // past the fold: fine
      expect(await store().count(compacted)).toBe(3);
    });

    it("branches a whole session, or the conversation up to a message, into a new session", async () => {
      const userId = `u-${crypto.randomUUID()}`;
      const source = { userId, conversationId: "main" };
      await editable().append(source, withToolCall());
      await store().setState(source, "summary", { summary: "two folded", folded: 2, trimmed: 0 });
      await store().setState(source, "entities", { entities: {}, processed: 6 });
      await store().setInfo?.(source, { title: "Weather", metadata: { pinned: true } });
      const copy = { userId, conversationId: "copy" };
      expect(await branchSession(store(), source, copy)).toEqual({ messages: 6 });
      expect((await store().read(copy)).map(fieldsOf)).toEqual((await store().read(source)).map(fieldsOf));
      expect(await store().getState(copy, "entities")).toEqual({ entities: {}, processed: 6 });
      if (store().info) expect(await store().info(copy)).toMatchObject({ title: "Weather", metadata: { pinned: true }, messageCount: 6 });

      const prefix = { userId, conversationId: "from-question-2" };
      expect(await branchSession(store(), source, prefix, { messages: 4 })).toEqual({ messages: 4 });
      expect(transcript(await store().read(prefix))).toEqual(transcript(withToolCall().slice(0, 4)));
      expect(await store().getState(prefix, "summary")).toEqual({ summary: "two folded", folded: 2, trimmed: 0 });
      expect(await store().getState(prefix, "entities")).toBeUndefined(); // it read past the branch point
      await expect(branchSession(store(), source, { userId, conversationId: "cut" }, { messages: 2 })).rejects.toMatchObject({ code: "EDIT_CONFLICT" });
      await expect(branchSession(store(), source, copy)).rejects.toMatchObject({ code: "EDIT_CONFLICT" });
      expect(await store().count(source)).toBe(6);
    });
  });
}
