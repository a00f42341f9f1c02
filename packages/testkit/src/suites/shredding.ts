import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { type HistoryStore, type JsonValue, type SessionKey, createSessionKey, encodeSessionKey, scopeKeyOf } from "@memoria/core";
import { DATA_KEY_STATE, type EncryptionOptions, type KeyVault, encryptStore, fileKeyVault } from "@memoria/privacy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numbered, transcript } from "../fixtures.js";
import { useStore } from "../harness.js";
import { writeSentinelMemory, writeSentinelTurn } from "../sentinel.js";
import type { PrivacySuiteSetup } from "../types.js";
import { rewrite } from "./tamper.js";

interface Copy {
  key: SessionKey;
  records: BaseMessage[];
  state: Record<string, JsonValue>;
}

/** Every session and scope record of a user, raw, as a backup (or the engine's own log) keeps it. */
async function backup(inner: HistoryStore, userId: string): Promise<Copy[]> {
  const keys = [...(await inner.list({ userId })).sessions, scopeKeyOf({ userId })];
  return Promise.all(keys.map(async (key) => ({ key, records: await inner.read(key, { sealed: true }), state: await inner.getAllState(key) })));
}

const vaultName = (userId: string) => encodeSessionKey(createSessionKey({ userId }));

/**
 * Crypto-shredding: with per-user keys kept in a vault outside the store,
 * `delete({ userId })` destroys the user's key, so every copy of the user's
 * records (a backup, an append-only log, free pages) is unreadable, while the
 * store's raw data never holds a key that could open them.
 */
export function shreddingSuite(setup: PrivacySuiteSetup, options: EncryptionOptions): void {
  describe(`${setup.name}: crypto-shredding with per-user keys`, () => {
    const inner = useStore(setup);
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "memoria-vault-"));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));
    const scoped = (vault: KeyVault, extra: Partial<EncryptionOptions> = {}) =>
      encryptStore(inner(), { ...options, ...extra, scopeKeys: { field: "userId", vault } });

    it("delete({ userId }) destroys the user's key: a copy of every record from before reads as shredded, other users still read", async () => {
      const vault = fileKeyVault(join(dir, "erase"));
      const store = scoped(vault);
      const tag = crypto.randomUUID().replaceAll("-", "");
      const [userId, other] = [`ada-${tag}`, `bob-${tag}`];
      await writeSentinelTurn(store, { userId, conversationId: "c1" }, `turn-${tag}`);
      await store.append({ userId, conversationId: "c2" }, numbered(4));
      await writeSentinelMemory(store, { userId }, `memory-${tag}`);
      await store.append({ userId: other, conversationId: "c1" }, numbered(2));
      const copies = await backup(inner(), userId);
      expect(copies.filter((copy) => copy.records.length > 0 || Object.keys(copy.state).length > 1)).toHaveLength(3); // c1: a turn and a summary; c2: a turn; the memory
      expect(copies.map((copy) => (copy.state[DATA_KEY_STATE] as { s?: string }).s)).toEqual(["userId", "userId", "userId"]); // all under ada's key

      // The user's key lives in the vault only: its sealed form is nowhere in the store's raw data.
      const entry = JSON.parse((await vault.get(vaultName(userId))) as string) as { w: string };
      if (setup.scan) expect(await setup.scan(inner(), entry.w)).toEqual([]);

      const receipt = await store.erase({ userId });
      expect(receipt).toMatchObject({ filter: { userId }, deleted: 3, shredded: { userId } });
      expect(receipt.at).toBeInstanceOf(Date);
      expect(await vault.get(vaultName(userId))).toBeUndefined();
      expect((await readdir(join(dir, "erase"))).filter((file) => !file.endsWith(".tmp"))).toHaveLength(1); // bob's key only

      // Whatever the engine still keeps of the user's records, found by a raw scan, is a copy like the backup.
      const sealedText = String(copies[0]!.records[0]!.content);
      const left = setup.scan ? await setup.scan(inner(), sealedText) : [];
      // Put every copy back, as a restore from backup would, and read through a store that holds the master key and the vault.
      for (const copy of copies) await rewrite(inner(), copy.key, copy.records, copy.state);
      const reader = scoped(vault);
      for (const copy of copies) {
        const where = `${encodeSessionKey(copy.key)} (copies left in the raw data: ${left.join(", ") || "none"})`;
        if (copy.records.length > 0) await expect(reader.read(copy.key), where).rejects.toMatchObject({ code: "INTEGRITY", reason: "shredded" });
        const sealedState = Object.keys(copy.state).some((name) => name !== DATA_KEY_STATE);
        if (sealedState) await expect(reader.getAllState(copy.key), where).rejects.toMatchObject({ code: "INTEGRITY", reason: "shredded" });
      }
      expect(transcript(await reader.read({ userId: other, conversationId: "c1" }))).toEqual(transcript(numbered(2)));

      // The user starts again: a new key, and the old copies stay shredded.
      await reader.append({ userId, conversationId: "c3" }, numbered(2));
      expect(transcript(await scoped(vault).read({ userId, conversationId: "c3" }))).toEqual(transcript(numbered(2)));
      await expect(scoped(vault).read(copies[0]!.key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "shredded" });
      await store.delete({ userId });
      await store.delete({ userId: other });
    });

    it("rekey moves sessions written before per-user keys under them, and rewraps the vault under a new master key", async () => {
      const vault = fileKeyVault(join(dir, "rekey"));
      const userId = `u-${crypto.randomUUID()}`;
      const conversation = { userId, conversationId: "c1" };
      const master = Object.values(options.keys as Record<string, Uint8Array>)[0]!;
      const underA = { keys: { A: master }, activeKeyId: "A" };
      await encryptStore(inner(), { ...options, ...underA }).append(conversation, numbered(3)); // before per-user keys
      await encryptStore(inner(), { ...options, ...underA }).setState(scopeKeyOf({ userId }), "profile", "in Lisbon");
      const moved = await scoped(vault, underA).rekey({ filter: { userId } });
      expect(moved).toEqual({ seen: 2, rewrapped: 2, scopeKeys: 0 });
      const rotated = { keys: { A: master, B: Buffer.alloc(32, 7) }, activeKeyId: "B" };
      expect(await scoped(vault, rotated).rekey({ filter: { userId } })).toEqual({ seen: 2, rewrapped: 0, scopeKeys: 1 });
      const onlyB = scoped(vault, { keys: { B: Buffer.alloc(32, 7) }, activeKeyId: "B" });
      expect(transcript(await onlyB.read(conversation))).toEqual(transcript(numbered(3)));
      expect(await onlyB.getState(scopeKeyOf({ userId }), "profile")).toBe("in Lisbon");

      const copies = await backup(inner(), userId);
      expect((await onlyB.erase({ userId })).shredded).toEqual({ userId });
      for (const copy of copies) await rewrite(inner(), copy.key, copy.records, copy.state);
      await expect(onlyB.read(conversation)).rejects.toMatchObject({ code: "INTEGRITY", reason: "shredded" });
      await inner().delete({ userId });
    });

    it("erases one conversation without shredding, and refuses a per-user record to a store opened without the vault", async () => {
      const vault = fileKeyVault(join(dir, "partial"));
      const store = scoped(vault);
      const userId = `u-${crypto.randomUUID()}`;
      await store.append({ userId, conversationId: "c1" }, numbered(2));
      await store.append({ userId, conversationId: "c2" }, numbered(2));
      const receipt = await store.erase({ userId, conversationId: "c1" });
      expect(receipt).toMatchObject({ deleted: 1 });
      expect(receipt.shredded).toBeUndefined();
      expect(await store.read({ userId, conversationId: "c2" })).toHaveLength(2);
      await expect(encryptStore(inner(), options).read({ userId, conversationId: "c2" })).rejects.toMatchObject({
        code: "INTEGRITY",
        reason: "unknown-key",
        message: expect.stringContaining("scopeKeys"),
      });
      expect(await store.delete({ userId })).toBe(1);
    });
  });
}
