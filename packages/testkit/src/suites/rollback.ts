import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { type HistoryStore, type JsonValue, type SessionKey, createInMemoryStore } from "@memoria/core";
import { type EncryptionOptions, type FreshnessAnchor, encryptStore, storeAnchor } from "@memoria/privacy";
import { describe, expect, it } from "vitest";
import { numbered, randomKey, transcript } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";
import { rewrite } from "./tamper.js";

/** A session's raw records and state, as an attacker with a copy of the database keeps them. */
async function snapshot(inner: HistoryStore, key: SessionKey): Promise<{ records: BaseMessage[]; state: Record<string, JsonValue> }> {
  return { records: await inner.read(key, { sealed: true }), state: await inner.getAllState(key) };
}

/**
 * Truncation and rollback of an encrypted session, each refused with its own
 * `IntegrityError` reason; what cannot be told apart inside a store an attacker
 * writes to (a whole session put back to an older consistent point) is refused with
 * a freshness anchor, and read as it stands without one. Every store instance below
 * opened afresh stands for another process: it has seen nothing before.
 */
export function rollbackSuite(setup: StoreSuiteSetup, options: EncryptionOptions): void {
  describe(`${setup.name}: truncation and rollback are refused`, () => {
    const inner = useStore(setup);
    const store = (anchor?: FreshnessAnchor) => encryptStore(inner(), { ...options, anchor });
    const turn = (n: number) => numbered(2, 2 * n); // a question and its answer: one write

    it("the newest record of a write removed, even by a process that saw nothing before", async () => {
      const key = randomKey("cut");
      await store().append(key, turn(0));
      await store().append(key, turn(1));
      const { records, state } = await snapshot(inner(), key);
      await rewrite(inner(), key, records.slice(0, 3), state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "truncated" });
      await expect(store().read(key, { last: 1 })).rejects.toMatchObject({ code: "INTEGRITY", reason: "truncated" });
      // After an edit that only removed messages: the record it sealed again, cut with what followed.
      await rewrite(inner(), key, records, state);
      await store().replaceTail(key, { from: 2, count: 4, messages: [] }); // the second turn removed
      const edited = await snapshot(inner(), key);
      expect(edited.records).toHaveLength(2);
      await rewrite(inner(), key, edited.records.slice(0, 1), edited.state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "truncated" });
    });

    it("a whole newest turn removed: refused by the process that saw it, and by any process with an anchor", async () => {
      const anchor = storeAnchor(createInMemoryStore());
      const key = randomKey("turn");
      const seer = store(anchor);
      await seer.append(key, turn(0));
      await seer.append(key, turn(1));
      expect(await seer.read(key)).toHaveLength(4);
      const { records, state } = await snapshot(inner(), key);
      await rewrite(inner(), key, records.slice(0, 2), state);
      await expect(seer.read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "truncated" });
      await expect(store(anchor).read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "truncated" });
      // The residual the threat model names: without an anchor, a fresh process reads the older session.
      expect(transcript(await store().read(key))).toEqual(transcript(turn(0)));
    });

    it("the records an edit replaced written back: all of them, or one among newer ones", async () => {
      const key = randomKey("edit");
      const writer = store();
      await writer.append(key, turn(0));
      await writer.append(key, turn(1));
      const before = await snapshot(inner(), key);
      await writer.replaceTail(key, { from: 2, count: 4, messages: [new HumanMessage("edited question")] });
      await writer.append(key, turn(2));
      const after = await snapshot(inner(), key);
      // The tail from before the edit, under today's data key record (with its marks).
      await rewrite(inner(), key, before.records, after.state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      // One replaced record among the records written since.
      await rewrite(inner(), key, [...after.records.slice(0, 2), before.records[2]!, ...after.records.slice(3)], after.state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      // The same, with the data key record from before the edit too: the records still name the ones before them.
      await rewrite(inner(), key, [...after.records.slice(0, 2), before.records[2]!, ...after.records.slice(3)], before.state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "mixed" });
      await rewrite(inner(), key, after.records, after.state);
      expect(transcript(await store().read(key))).toEqual([...transcript(turn(0)), "human: edited question", ...transcript(turn(2))]);
    });

    it("a whole session put back to an older consistent point: refused with an anchor, records and state alike", async () => {
      const anchor = storeAnchor(createInMemoryStore());
      const key = randomKey("restore");
      await store(anchor).append(key, turn(0));
      await store(anchor).setState(key, "summary", { text: "first" });
      const old = await snapshot(inner(), key);
      await store(anchor).append(key, turn(1));
      await store(anchor).setState(key, "summary", { text: "second" });
      const now = await snapshot(inner(), key);
      await rewrite(inner(), key, old.records, old.state);
      await expect(store(anchor).read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "truncated" });
      await expect(store(anchor).getState(key, "summary")).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      await expect(store(anchor).getAllState(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      expect(await store().getState(key, "summary")).toEqual({ text: "first" }); // no anchor: the residual
      // Only the state value put back, the records as they are.
      await rewrite(inner(), key, now.records, { ...now.state, summary: old.state.summary! });
      expect(await store(anchor).read(key)).toHaveLength(4);
      await expect(store(anchor).getState(key, "summary")).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      // Records from before an edit, with the data key record from before it too: the anchor holds the edit.
      await store(anchor).replaceTail(key, { from: 1, count: 4, messages: [] });
      await rewrite(inner(), key, now.records, now.state);
      await expect(store(anchor).read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
    });

    it("state values written together (setStates) are each versioned: any of them put back older is refused with an anchor", async () => {
      const anchor = storeAnchor(createInMemoryStore());
      const key = randomKey("batch");
      const writer = store(anchor);
      await writer.setStates(key, { summary: { text: "first" }, entities: ["Ada"] });
      const before = await snapshot(inner(), key);
      await writer.setStates(key, { summary: { text: "second" }, entities: ["Ada", "Bob"] });
      await rewrite(inner(), key, before.records, before.state);
      await expect(store(anchor).getState(key, "summary")).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      await expect(store(anchor).getState(key, "entities")).rejects.toMatchObject({ code: "INTEGRITY", reason: "rolled-back" });
      expect(await store().getState(key, "entities")).toEqual(["Ada"]); // no anchor: the residual
    });

    it("refuses nothing that was written through memoria: edits that only remove, a trim that empties, other processes' writes", async () => {
      const anchor = storeAnchor(createInMemoryStore());
      const key = randomKey("honest");
      const [a, b] = [store(anchor), store(anchor)];
      await a.append(key, turn(0));
      await a.append(key, turn(1));
      expect(await b.read(key)).toHaveLength(4); // b saw four
      await a.replaceTail(key, { from: 3, count: 4, messages: [] }); // the last answer removed
      expect(transcript(await b.read(key))).toEqual(transcript(numbered(3)));
      await a.replaceTail(key, { from: 1, count: 3, messages: [] });
      expect(await b.read(key)).toHaveLength(1);
      expect(await b.read(key, { last: 1 })).toHaveLength(1);
      await a.append(key, turn(4));
      expect(await b.read(key)).toHaveLength(3); // b saw position 2
      const trims = inner().capabilities.trim;
      if (trims) {
        // Empties the session: positions go on from 3, not 0, or b would take the next turn for a cut.
        expect(await a.trim(key, { oldest: 5 })).toBe(3);
        await a.append(key, turn(5));
        expect(transcript(await b.read(key))).toEqual(transcript(turn(5)));
      }
      await b.append(key, turn(6));
      expect(await a.read(key)).toHaveLength(trims ? 4 : 7);
      await a.clear(key);
      await a.append(key, turn(7)); // a new data key: heads seen before it do not apply
      expect(transcript(await b.read(key))).toEqual(transcript(turn(7)));
      expect(transcript(await store().read(key))).toEqual(transcript(turn(7)));
    });
  });
}
