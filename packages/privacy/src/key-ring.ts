import { type KeyObject, createSecretKey } from "node:crypto";
import { MemoriaError } from "@memoria/core";
import { outsideCall } from "./outside-call.js";

/** 32 bytes of key, as bytes or as base64 text. */
export type KeyMaterial = Uint8Array | string;

/** Master keys by id, or a function that fetches one (from a KMS, a vault). */
export type KeySource = Readonly<Record<string, KeyMaterial>> | ((keyId: string) => KeyMaterial | undefined | Promise<KeyMaterial | undefined>);

const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks a key id: 1 to 64 letters, digits, `_` or `-`. */
export function keyId(id: unknown, what = "activeKeyId"): string {
  if (typeof id !== "string" || !KEY_ID.test(id)) {
    throw new MemoriaError("INVALID_ARGUMENT", `${what} must be 1 to 64 letters, digits, "_" or "-"; got ${JSON.stringify(id)}.`);
  }
  return id;
}

function toKeyObject(id: string, material: KeyMaterial): KeyObject {
  if (typeof material !== "string" && !(material instanceof Uint8Array)) {
    // Most often an environment variable that is not set: `keys: { k1: process.env.KEY! }`.
    throw new MemoriaError(
      "INVALID_ARGUMENT",
      `Key "${id}" must be 32 bytes (AES-256), as bytes or base64 text; got ${material === undefined ? "undefined (is the variable it comes from set?)" : typeof material}.`,
    );
  }
  const bytes = typeof material === "string" ? Buffer.from(material, "base64") : Buffer.from(material);
  if (bytes.length !== 32) {
    throw new MemoriaError("INVALID_ARGUMENT", `Key "${id}" must be 32 bytes (AES-256), as bytes or base64 text; got ${bytes.length} bytes.`);
  }
  return createSecretKey(bytes);
}

/**
 * The app's master keys: the active one seals new data keys; every one still in the
 * ring opens what it sealed. A key fetched from a function is asked for once and kept.
 */
export class KeyRing {
  readonly #source: KeySource;
  readonly #keys = new Map<string, Promise<KeyObject | undefined>>();
  readonly activeKeyId: string;

  constructor(source: KeySource, activeKeyId: string) {
    if (typeof source !== "function" && (typeof source !== "object" || source === null)) {
      throw new MemoriaError("INVALID_ARGUMENT", "keys must be an object of key id to 32-byte key, or a function that returns one.");
    }
    this.#source = source;
    this.activeKeyId = keyId(activeKeyId);
    if (typeof source !== "function") {
      for (const id of Object.keys(source)) toKeyObject(keyId(id, "A key id"), source[id] as KeyMaterial);
      if (!Object.hasOwn(source, this.activeKeyId)) {
        throw new MemoriaError(
          "INVALID_ARGUMENT",
          `The active key "${this.activeKeyId}" is not among the keys given (${Object.keys(source).join(", ") || "none"}).`,
        );
      }
    }
  }

  /** The key with this id, or undefined when the ring does not hold it. */
  get(id: string): Promise<KeyObject | undefined> {
    let key = this.#keys.get(id);
    if (!key) {
      key = this.#fetch(id);
      this.#keys.set(id, key);
      key.then(
        (found) => found ?? this.#keys.delete(id), // ask again next time: a KMS may learn it
        () => this.#keys.delete(id),
      );
    }
    return key;
  }

  async #fetch(id: string): Promise<KeyObject | undefined> {
    const source = this.#source;
    let material: KeyMaterial | undefined;
    if (typeof source !== "function") {
      material = Object.hasOwn(source, id) ? source[id] : undefined;
    } else {
      // A key service that is down is like a store that is down: nothing was written.
      material = await outsideCall(`The key source failed to give key "${id}"`, "not-stored", () => source(id));
    }
    return material === undefined ? undefined : toKeyObject(id, material);
  }

  /** The active key; a function source that cannot give it is an error, not a silent plaintext write. */
  async active(): Promise<KeyObject> {
    const key = await this.get(this.activeKeyId);
    if (!key) throw new MemoriaError("INVALID_ARGUMENT", `The key source gave no key for the active key id "${this.activeKeyId}".`);
    return key;
  }
}
