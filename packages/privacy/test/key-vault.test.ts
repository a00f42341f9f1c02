import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInMemoryStore } from "@memoria/core";
import { afterAll, describe, expect, it } from "vitest";
import { type KeyVault, encryptStore, fileKeyVault, guardStore, memoryKeyVault, redactStore } from "../src/index.js";
import { HumanMessage } from "@langchain/core/messages";

const numbered = (n: number) => Array.from({ length: n }, (_, i) => new HumanMessage(`message ${i}`));

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "memoria-vault-test-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

const keys = { A: randomBytes(32) };

describe("fileKeyVault", () => {
  it("creates atomically across processes: two vaults on one folder racing agree on the first entry", async () => {
    const dir = await tempDir();
    const vaults = Array.from({ length: 8 }, () => fileKeyVault(dir));
    const stored = await Promise.all(vaults.map((vault, n) => vault.create("userId=ada", `entry ${n}`)));
    expect(new Set(stored).size).toBe(1);
    expect(await fileKeyVault(dir).get("userId=ada")).toBe(stored[0]);
    expect((await readdir(dir)).filter((file) => file.endsWith(".tmp"))).toEqual([]); // no scratch files left
  });

  it("names files by hash, so hostile ids never reach the file system, and destroy removes the file", async () => {
    const dir = await tempDir();
    const vault = fileKeyVault(dir);
    const hostile = ["../../etc/passwd", "a/b", "\u0000", "CON", "é".repeat(300)];
    for (const name of hostile) await vault.create(`userId=${name}`, name);
    const files = await readdir(dir);
    expect(files).toHaveLength(hostile.length);
    for (const file of files) expect(file).toMatch(/^[0-9a-f]{64}\.key$/);
    for (const name of hostile) expect(await vault.get(`userId=${name}`)).toBe(name);
    expect(await vault.destroy("userId=../../etc/passwd")).toBe(true);
    expect(await vault.destroy("userId=../../etc/passwd")).toBe(false);
    expect(await readdir(dir)).toHaveLength(hostile.length - 1);
    await vault.replace("userId=a/b", "rewrapped");
    expect(await vault.get("userId=a/b")).toBe("rewrapped");
  });
});

describe("encryptStore with scopeKeys", () => {
  const setup = (vault: KeyVault) => {
    const inner = createInMemoryStore();
    return { inner, store: encryptStore(inner, { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } }) };
  };

  it("seals sessions without the field under the master key, and erases them without shredding", async () => {
    const vault = memoryKeyVault();
    const { store } = setup(vault);
    await store.append({ sessionId: "s1" }, numbered(2));
    expect(await vault.get("sessionId=s1")).toBeUndefined();
    expect(await store.read({ sessionId: "s1" })).toHaveLength(2);
    const receipt = await store.erase({ sessionId: "s1" });
    expect(receipt).toEqual({ filter: { sessionId: "s1" }, deleted: 1, at: expect.any(Date) });
  });

  it("a vault that fails is a StoreUnavailableError naming it, and nothing is written", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "not-a-folder"), "");
    const { inner, store } = setup(fileKeyVault(join(dir, "not-a-folder", "keys"))); // cannot be made, even by root
    const failed = await store.append({ userId: "ada", conversationId: "c1" }, numbered(1)).catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: "STORE_UNAVAILABLE", outcome: "not-stored", message: expect.stringContaining("key vault") });
    expect(await inner.count({ userId: "ada", conversationId: "c1" })).toBe(0);
    expect(await inner.getState({ userId: "ada", conversationId: "c1" }, "memoria.datakey")).toBeUndefined();
  });

  it("a vault entry changed is tampered; one sealed under a master key the ring lacks is unknown-key", async () => {
    const vault = memoryKeyVault();
    const { inner, store } = setup(vault);
    const key = { userId: "ada", conversationId: "c1" };
    await store.append(key, numbered(1));
    const entry = JSON.parse((await vault.get("userId=ada")) as string) as { w: string; k: string };
    await vault.replace("userId=ada", JSON.stringify({ ...entry, w: `${entry.w.slice(0, -4)}AAAA` }));
    const fresh = encryptStore(inner, { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } });
    await expect(fresh.read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "tampered" });
    await vault.replace("userId=ada", JSON.stringify({ ...entry, k: "Z" }));
    const other = encryptStore(inner, { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } });
    await expect(other.read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "unknown-key" });
  });

  it("with hashed ids: the vault is named by the hash, never the raw id, and erasing by the raw id shreds", async () => {
    const vault = memoryKeyVault();
    const inner = createInMemoryStore();
    const options = { keys, activeKeyId: "A", hashIds: { secret: randomBytes(32) }, scopeKeys: { field: "userId", vault } };
    const store = encryptStore(inner, options);
    const key = { userId: "ada", conversationId: "c1" };
    await store.append(key, numbered(2));
    expect(await vault.get("userId=ada")).toBeUndefined();
    const [stored] = (await inner.list({})).sessions;
    const named = `userId=${encodeURIComponent(stored!.userId!)}`;
    expect(await vault.get(named)).toBeDefined();
    const copy = { records: await inner.read(stored!, { sealed: true }), state: await inner.getAllState(stored!) };
    expect(await store.erase({ userId: "ada" })).toMatchObject({ deleted: 1, shredded: { userId: "ada" } });
    expect(await vault.get(named)).toBeUndefined();
    for (const [name, value] of Object.entries(copy.state)) await inner.setState(stored!, name, value);
    await inner.append(stored!, copy.records);
    await expect(encryptStore(inner, options).read(key)).rejects.toMatchObject({ code: "INTEGRITY", reason: "shredded" });
  });

  describe("an erasure's receipt for data sealed before scopeKeys was on", () => {
    const key = { userId: "ada", conversationId: "c1" };
    /** Everything the inner store holds of the session, as a backup taken now would. */
    const copyOf = async (inner: ReturnType<typeof createInMemoryStore>) => ({
      records: await inner.read(key, { sealed: true }),
      state: await inner.getAllState(key),
    });
    /** Puts a copy back, then reads it through a store opened as the app opens it. */
    const reopen = async (inner: ReturnType<typeof createInMemoryStore>, copy: Awaited<ReturnType<typeof copyOf>>, vault: KeyVault) => {
      for (const [name, value] of Object.entries(copy.state)) await inner.setState(key, name, value);
      await inner.append(key, copy.records);
      return encryptStore(inner, { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } }).read(key);
    };

    it("lists them as not shredded, and says true: a copy taken before the erasure still opens", async () => {
      const inner = createInMemoryStore();
      await encryptStore(inner, { keys, activeKeyId: "A" }).append(key, numbered(2)); // before scopeKeys
      const vault = memoryKeyVault();
      const store = encryptStore(inner, { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } });
      await store.append({ userId: "ada", conversationId: "c2" }, numbered(1)); // after: under ada's key
      const copy = await copyOf(inner);
      expect(await store.erase({ userId: "ada" })).toEqual({
        filter: { userId: "ada" },
        deleted: 2,
        shredded: { userId: "ada" },
        notShredded: 1,
        at: expect.any(Date),
      });
      expect(await reopen(inner, copy, vault)).toHaveLength(2);
    });

    it("after rekey() moved them under the scope's key: shredded, and a copy taken after the rekey no longer opens", async () => {
      const inner = createInMemoryStore();
      await encryptStore(inner, { keys, activeKeyId: "A" }).append(key, numbered(2));
      const vault = memoryKeyVault();
      const store = encryptStore(inner, { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } });
      expect(await store.rekey()).toMatchObject({ seen: 1, rewrapped: 1 });
      const copy = await copyOf(inner);
      expect(await store.erase({ userId: "ada" })).toEqual({ filter: { userId: "ada" }, deleted: 1, shredded: { userId: "ada" }, at: expect.any(Date) });
      await expect(reopen(inner, copy, vault)).rejects.toMatchObject({ code: "INTEGRITY", reason: "shredded" });
    });
  });

  it("delete through guardStore and redactStore shreds as erase does", async () => {
    const vault = memoryKeyVault();
    const store = guardStore(redactStore(encryptStore(createInMemoryStore(), { keys, activeKeyId: "A", scopeKeys: { field: "userId", vault } })), () => true);
    await store.append({ userId: "ada", conversationId: "c1" }, numbered(1));
    expect(await vault.get("userId=ada")).toBeDefined();
    expect(await store.delete({ userId: "ada" })).toBe(1);
    expect(await vault.get("userId=ada")).toBeUndefined();
  });
});
