import { readFile } from "node:fs/promises";
import type { HistoryStore } from "@memoria/core";
import type { EncryptionOptions } from "@memoria/privacy";
import { UsageError } from "./cli-error.js";

/**
 * The master keys of an encrypted store, as a JSON file (kept out of the command
 * line and the shell history):
 * `{ "activeKeyId": "B", "keys": { "A": "<base64>", "B": "<base64>" }, "hashIdsSecret": "<base64>" }`
 * (`hashIdsSecret` only when the app uses `hashIds`).
 */
export async function readKeyFile(path: string): Promise<EncryptionOptions> {
  let parsed: { activeKeyId?: unknown; keys?: unknown; hashIdsSecret?: unknown };
  try {
    parsed = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new UsageError(`cannot read the key file ${path}: ${(error as Error).message}`);
  }
  const { activeKeyId, keys, hashIdsSecret } = parsed ?? {};
  if (typeof activeKeyId !== "string" || typeof keys !== "object" || keys === null || Array.isArray(keys)) {
    throw new UsageError(`the key file ${path} needs { "activeKeyId": "…", "keys": { "<id>": "<base64 of 32 bytes>" } }.`);
  }
  const options: EncryptionOptions = { keys: keys as Record<string, string>, activeKeyId };
  if (hashIdsSecret !== undefined) {
    if (typeof hashIdsSecret !== "string") throw new UsageError(`"hashIdsSecret" in ${path} must be base64 text.`);
    options.hashIds = { secret: hashIdsSecret };
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
