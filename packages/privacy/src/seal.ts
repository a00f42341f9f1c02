import { type KeyObject, createCipheriv, createDecipheriv, randomBytes, randomFillSync } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

// Random IVs drawn from a pool refilled 4,096 at a time: one call to the system's
// random source per 4,096 seals instead of one per seal (the call costs more than
// the AES). Each IV is used once.
const ivPool = Buffer.allocUnsafe(IV_BYTES * 4096);
let ivOffset = ivPool.length;

function nextIv(): Buffer {
  if (ivOffset === ivPool.length) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}

/**
 * Seals `plaintext` with AES-256-GCM under `key`, binding `aad` (associated data:
 * where the record belongs). The result is base64url text of IV, ciphertext and
 * tag; every call draws a fresh random IV.
 */
export function seal(key: KeyObject, plaintext: Buffer, aad: string): string {
  const iv = nextIv();
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = cipher.update(plaintext);
  cipher.final(); // GCM holds nothing back: update gave every byte
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/**
 * Opens a record made by {@link seal} with the same key and associated data; undefined
 * when anything differs (a changed byte, another key, another place), since GCM
 * cannot tell those apart.
 */
export function open(key: KeyObject, sealed: string, aad: string): Buffer | undefined {
  const bytes = Buffer.from(sealed, "base64url");
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const body = decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES));
    decipher.final(); // checks the tag; GCM holds nothing back
    return body;
  } catch {
    return undefined;
  }
}

/** A short random id, for data keys. */
export function randomId(): string {
  return randomBytes(9).toString("base64url");
}
