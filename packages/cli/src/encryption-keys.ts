import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { HistoryStore } from "@memoria/core";
import type { EncryptionOptions } from "@memoria/privacy";
import { UsageError } from "./cli-error.js";

/**
 * The master keys of an encrypted store, as a JSON file (kept out of the command
 * line and the shell history):
 * `{ "activeKeyId": "B", "keys": { "A": "<base64>", "B": "<base64>" }, "hashIdsSecret": "<base64>" }`
 * (`hashIdsSecret` only when the app uses `hashIds`; `"scopeKeys": { "field": "userId",
 * "vault": "<folder>" }` when it keeps per-user keys in a `fileKeyVault`, the folder
 * relative to the key file).
 */
export async function readKeyFile(path: string): Promise<EncryptionOptions> {
  let parsed: { activeKeyId?: unknown; keys?: unknown; hashIdsSecret?: unknown; scopeKeys?: { field?: unknown; vault?: unknown } };
  try {
    parsed = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new UsageError(`cannot read the key file ${path}: ${(error as Error).message}`);
  }
  const { activeKeyId, keys, hashIdsSecret, scopeKeys } = parsed ?? {};
  if (typeof activeKeyId !== "string" || typeof keys !== "object" || keys === null || Array.isArray(keys)) {
    throw new UsageError(`the key file ${path} needs { "activeKeyId": "…", "keys": { "<id>": "<base64 of 32 bytes>" } }.`);
  }
  const options: EncryptionOptions = { keys: keys as Record<string, string>, activeKeyId };
  if (hashIdsSecret !== undefined) {
    if (typeof hashIdsSecret !== "string") throw new UsageError(`"hashIdsSecret" in ${path} must be base64 text.`);
    options.hashIds = { secret: hashIdsSecret };
  }
  if (scopeKeys !== undefined) {
    if (typeof scopeKeys?.field !== "string" || typeof scopeKeys.vault !== "string") {
      throw new UsageError(`"scopeKeys" in ${path} needs { "field": "userId", "vault": "<folder of the key vault>" }.`);
    }
    const { fileKeyVault } = await import("@memoria/privacy");
    options.scopeKeys = { field: scopeKeys.field, vault: fileKeyVault(resolve(dirname(path), scopeKeys.vault)) };
  }
  return options;
}

/** The store as the app sees it: opened through `encryptStore` when a key file is given. */
export async function throughKeys(store: HistoryStore, keyFile: string | undefined): Promise<HistoryStore> {
  if (keyFile === undefined) return store;
  const { encryptStore } = await import("@memoria/privacy");
  try {
    return encryptStore(store, await readKeyFile(keyFile));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`the key file ${keyFile} does not hold usable keys: ${(error as Error).message}`);
  }
}
