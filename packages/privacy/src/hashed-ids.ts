import { createHmac } from "node:crypto";
import { MemoriaError, type SessionKey, type SessionKeyFilter, createKeyFilter, createSessionKey } from "@memoria/core";
import type { KeyMaterial } from "./key-ring.js";

/** Stored values of hashed key fields start with this; raw values never reach the store. */
const HASH_PREFIX = "h.";

/**
 * Replaces each session-key value by a keyed hash (HMAC-SHA-256 of the field name
 * and value, 192 bits in base64url), so the store never holds a raw user or
 * conversation id. The same value always hashes alike, so lookups, `list` by a
 * field and `delete` by a field still match; field names stay as they are.
 */
export class KeyHasher {
  readonly #secret: Buffer;
  readonly #keys = new WeakMap<SessionKey, SessionKey>();

  constructor(secret: KeyMaterial) {
    const bytes = typeof secret === "string" ? Buffer.from(secret, "base64") : Buffer.from(secret);
    if (bytes.length < 32) throw new MemoriaError("INVALID_ARGUMENT", `hashIds.secret must hold at least 32 bytes, got ${bytes.length}.`);
    this.#secret = bytes;
  }

  #value(field: string, value: string): string {
    return HASH_PREFIX + createHmac("sha256", this.#secret).update(`${field}\u0000${value}`).digest().subarray(0, 24).toString("base64url");
  }

  #map(record: Readonly<Record<string, string>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const field of Object.keys(record)) out[field] = this.#value(field, record[field] as string);
    return out;
  }

  key(key: SessionKey): SessionKey {
    let hashed = this.#keys.get(key);
    if (!hashed) {
      hashed = createSessionKey(this.#map(key));
      if (Object.isFrozen(key)) this.#keys.set(key, hashed);
    }
    return hashed;
  }

  filter(filter: SessionKeyFilter): SessionKeyFilter {
    return createKeyFilter(this.#map(filter));
  }
}
