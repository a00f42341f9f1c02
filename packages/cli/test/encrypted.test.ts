import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { encryptStore, fileKeyVault } from "@memoria/privacy";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../src/store-url.js";
import { memoria } from "./run-cli.js";

const dir = mkdtempSync(join(tmpdir(), "memoria-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function keyFile(name: string, content: object): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(content), { mode: 0o600 });
  return path;
}

describe("memoria on an encrypted store", () => {
  it("reads through --keys, rotates the master key with rekey, and says when a key is missing", async () => {
    const A = randomBytes(32).toString("base64");
    const B = randomBytes(32).toString("base64");
    const onlyA = keyFile("a.json", { activeKeyId: "A", keys: { A } });
    const rotate = keyFile("ab.json", { activeKeyId: "B", keys: { A, B } });
    const onlyB = keyFile("b.json", { activeKeyId: "B", keys: { B } });
    const url = `sqlite:${join(dir, "sealed.db")}`;
    const { store } = await openStore(url, { create: true });
    const sealed = encryptStore(store, { keys: { A }, activeKeyId: "A" });
    for (const n of [1, 2, 3]) {
      const key = { userId: "ada", conversationId: `c${n}` };
      await sealed.append(key, [new HumanMessage(`secret question ${n}`), new AIMessage(`secret answer ${n}`)]);
      await sealed.setInfo(key, { title: `Secret ${n}` });
    }
    await sealed.close();

    const listed = await memoria(["sessions", "--store", url, "--keys", onlyA, "--json"]);
    expect(listed.stderr).toBe("");
    expect(
      listed.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).title),
    ).toEqual(["Secret 3", "Secret 2", "Secret 1"]);
    const rekeyed = await memoria(["rekey", "--store", url, "--keys", rotate]);
    expect(rekeyed.stdout).toBe("rekeyed: 3 of 3 sessions rewrapped under the active key; the others were under it already\n");
    expect((await memoria(["rekey", "--store", url, "--keys", rotate])).stdout).toContain("rekeyed: 0 of 3");
    // Without --keys, the store refuses to hand sealed records over as messages.
    const plain = await memoria(["show", "conversationId=c2&userId=ada", "--store", url]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe("");
    expect(plain.stderr).toMatch(/^memoria: .*\(sealed\).*encryptStore.* Pass --keys <file> with the app's master keys.*\(INTEGRITY\)\n$/);
    const shown = await memoria(["show", "conversationId=c2&userId=ada", "--store", url, "--keys", onlyB]);
    expect(shown.stdout).toContain("[1] human: secret question 2");
    const stale = await memoria(["show", "conversationId=c2&userId=ada", "--store", url, "--keys", onlyA]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^memoria: .*master key "B".*\(INTEGRITY\)\n$/);
    const noKeys = await memoria(["rekey", "--store", url]);
    expect(noKeys.code).toBe(2);
    const badFile = await memoria(["sessions", "--store", url, "--keys", join(dir, "missing.json")]);
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toMatch(/^memoria: cannot read the key file .*missing\.json/);
  });

  it("erases a user with per-user keys (scopeKeys in the key file): the receipt says the user's key was shredded", async () => {
    const A = randomBytes(32).toString("base64");
    const file = keyFile("scoped.json", { activeKeyId: "A", keys: { A }, scopeKeys: { field: "userId", vault: "vault" } });
    const url = `sqlite:${join(dir, "scoped.db")}`;
    const { store } = await openStore(url, { create: true });
    await encryptStore(store, { keys: { A }, activeKeyId: "A" }).append({ userId: "ada", conversationId: "c0" }, [
      new HumanMessage("sealed before per-user keys"),
    ]);
    const sealed = encryptStore(store, { keys: { A }, activeKeyId: "A", scopeKeys: { field: "userId", vault: fileKeyVault(join(dir, "vault")) } });
    await sealed.append({ userId: "ada", conversationId: "c1" }, [new HumanMessage("secret question")]);
    await sealed.append({ userId: "bob", conversationId: "c1" }, [new HumanMessage("bob's question")]);
    await sealed.close();
    expect(readdirSync(join(dir, "vault"))).toHaveLength(2);

    const shown = await memoria(["show", "conversationId=c1&userId=ada", "--store", url, "--keys", file]);
    expect(shown.stdout).toContain("[1] human: secret question");
    const erased = await memoria(["erase", "--user", "ada", "--yes", "--store", url, "--keys", file]);
    expect(erased.stderr).toBe("");
    expect(erased.stdout).toContain("erased 2 sessions (2 messages)");
    // The receipt claims no more than happened: one of Ada's conversations was under the master key.
    expect(erased.stdout).toContain("shredded the key of userId=ada, but 1 session was sealed before per-user keys were on: deleted, not shredded;");
    expect(erased.stdout).not.toContain("every copy of its data the store kept is unreadable");
    expect(readdirSync(join(dir, "vault"))).toHaveLength(1); // bob's
    expect((await memoria(["show", "conversationId=c1&userId=bob", "--store", url, "--keys", file])).stdout).toContain("bob's question");
    const badVault = keyFile("bad-vault.json", { activeKeyId: "A", keys: { A }, scopeKeys: { field: "userId" } });
    const refused = await memoria(["sessions", "--store", url, "--keys", badVault]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('"scopeKeys"');
  });
});
