import { randomBytes } from "node:crypto";
import { type BaseMessage, ChatMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, type JsonValue, RunnableWithMessageHistory, type SessionKey } from "@memoria/core";
import { DATA_KEY_STATE, type EncryptionOptions, encryptStore } from "@memoria/privacy";
import { describe, expect, it } from "vitest";
import { numbered, randomKey } from "../fixtures.js";
import { useStore } from "../harness.js";
import type { StoreSuiteSetup } from "../types.js";

/**
 * Writes a session's raw records and state back as an attacker with database access
 * would: the same data key record, the records given (in the order given).
 */
export async function rewrite(inner: HistoryStore, key: SessionKey, records: BaseMessage[], state: Record<string, JsonValue | undefined>) {
  await inner.clear(key);
  for (const [name, value] of Object.entries(state)) if (value !== undefined) await inner.setState(key, name, value);
  if (records.length > 0) await inner.append(key, records);
}

/** A sealed record with one character of its ciphertext changed. */
function flipped(record: BaseMessage): BaseMessage {
  const text = String(record.content);
  const at = text.length - 10;
  const swapped = text[at] === "A" ? "B" : "A";
  return new ChatMessage({ role: (record as ChatMessage).role, content: text.slice(0, at) + swapped + text.slice(at + 1) });
}

/** A sealed record whose envelope claims another position. */
function relabelled(record: BaseMessage, position: number): BaseMessage {
  const [prefix, id, , ...rest] = String(record.content).split(".");
  return new ChatMessage({ role: (record as ChatMessage).role, content: [prefix, id, position, ...rest].join(".") });
}

/** Tampering with sealed data at rest, each kind refused with a typed error and nothing returned. */
export function tamperSuite(setup: StoreSuiteSetup, options: EncryptionOptions): void {
  describe(`${setup.name}: tampered records are refused`, () => {
    const inner = useStore(setup);
    const store = () => encryptStore(inner(), options);

    async function sealedSession(size = 3) {
      const key = randomKey("sealed");
      await store().append(key, numbered(size));
      await store().setState(key, "summary", { text: "what was said" });
      const records = await inner().read(key, { sealed: true });
      const state = { [DATA_KEY_STATE]: await inner().getState(key, DATA_KEY_STATE), summary: await inner().getState(key, "summary") };
      return { key, records, state };
    }

    it("a flipped byte in a message or a state value", async () => {
      const { key, records, state } = await sealedSession();
      await rewrite(inner(), key, [records[0]!, flipped(records[1]!), records[2]!], state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
      const value = String(state.summary);
      await rewrite(inner(), key, records, { ...state, summary: `${value.slice(0, -4)}${value.endsWith("AAAA") ? "BBBB" : "AAAA"}` });
      await expect(store().getState(key, "summary")).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
      expect(await store().read(key, { last: 1 })).toHaveLength(1); // the untouched records still open
    });

    it("a record swapped in from another session, and a state value copied from one", async () => {
      const a = await sealedSession();
      const b = await sealedSession();
      await rewrite(inner(), a.key, [a.records[0]!, b.records[1]!, a.records[2]!], a.state);
      await expect(store().read(a.key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "misplaced" });
      // The same record under the victim's data key id: its seal is bound to the other session.
      const forged = new ChatMessage({
        role: "memoria.sealed",
        content: String(b.records[1]!.content).replace(/^(ms\d\.)[^.]+\./, `$1${String(a.records[1]!.content).split(".")[1]}.`),
      });
      await rewrite(inner(), a.key, [a.records[0]!, forged, a.records[2]!], a.state);
      await expect(store().read(a.key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
      await rewrite(inner(), a.key, a.records, { ...a.state, summary: b.state.summary });
      await expect(store().getState(a.key, "summary")).rejects.toMatchObject({ code: "INTEGRITY" });
      await rewrite(inner(), a.key, a.records, { ...a.state, [DATA_KEY_STATE]: b.state[DATA_KEY_STATE] });
      await expect(store().read(a.key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
    });

    it("a record moved within its session, copied over another, or relabelled with another position; a state value renamed", async () => {
      const { key, records, state } = await sealedSession(4);
      await rewrite(inner(), key, [records[0]!, records[2]!, records[1]!, records[3]!], state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "misplaced" });
      await rewrite(inner(), key, [records[0]!, records[1]!, records[2]!, records[1]!], state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "misplaced" });
      await rewrite(inner(), key, [records[0]!, relabelled(records[2]!, 1), relabelled(records[1]!, 2), records[3]!], state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
      await rewrite(inner(), key, records, { ...state, notes: state.summary });
      await expect(store().getState(key, "notes")).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
    });

    it("a plain store opened on sealed records: a typed error that says to open it through encryptStore, never ciphertext", async () => {
      const { key } = await sealedSession();
      const refused = await inner()
        .read(key)
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "INTEGRITY", reason: "sealed" });
      expect((refused as Error).message).toMatch(/encryptStore\(store, \{ keys, activeKeyId \}\)/);
      await expect(inner().read(key, { last: 1 })).rejects.toMatchObject({ code: "INTEGRITY", reason: "sealed" });
      await expect(inner().history(key).getMessages()).rejects.toMatchObject({ code: "INTEGRITY", reason: "sealed" });
      expect(await inner().read(key, { sealed: true })).toHaveLength(3); // what encryptStore itself asks for
      expect(await store().read(key)).toHaveLength(3);
      // A turn on the plain store, whose read may ride with its lock: refused alike, the lock given back.
      const chain = new RunnableWithMessageHistory({ store: inner(), runnable: RunnableLambda.from(() => "answer") });
      await expect(chain.invoke("q", { configurable: key })).rejects.toMatchObject({ code: "INTEGRITY", reason: "sealed" });
      await (await inner().lock?.(key, { waitMs: 0 }))?.release();
      expect(await inner().read(key, { sealed: true })).toHaveLength(3);
    });

    it("a wrong key, an unknown key id, and a plaintext record slipped in", async () => {
      const { key, records, state } = await sealedSession();
      const wrongKey = encryptStore(inner(), { keys: { A: randomBytes(32) }, activeKeyId: "A" });
      await expect(wrongKey.read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
      await expect(wrongKey.getState(key, "summary")).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
      const otherId = encryptStore(inner(), { keys: { Z: randomBytes(32) }, activeKeyId: "Z" });
      await expect(otherId.read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "unknown-key" });
      await expect(wrongKey.append(key, numbered(1))).rejects.toMatchObject({ code: "INTEGRITY" });
      expect(await inner().count(key)).toBe(3); // a wrong key writes nothing
      await rewrite(inner(), key, [...records, new HumanMessage("injected")], state);
      await expect(store().read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "not-sealed" });
    });
  });
}
