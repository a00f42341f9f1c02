import { type KeyObject, createSecretKey, randomBytes } from "node:crypto";
import { IntegrityError, MemoriaError, type SessionKey, createSessionKey, encodeSessionKey } from "@memoria/core";
import type { KeyRing } from "./key-ring.js";
import type { KeyVault } from "./key-vault.js";
import { outsideCall } from "./outside-call.js";
import { open, randomId, seal } from "./seal.js";

export interface ScopeKeyOptions {
  /** The session-key field that names a scope, e.g. `"userId"`: every session and scope record with that field is sealed under its value's key. */
  field: string;
  /** Where the scope keys are kept, outside the store (see `fileKeyVault`). */
  vault: KeyVault;
}

/** A vault entry: a scope key's id, the master key that wraps it, and the wrapped key. */
interface VaultEntry {
  v: 1;
  id: string;
  k: string;
  w: string;
}

const entryAad = (name: string, id: string) => `memoria.scopekey|${name}|${id}`;

/** A vault entry as stored; a malformed one is `tampered`. */
function parseEntry(key: SessionKey, name: string, text: string): VaultEntry {
  let entry: Partial<VaultEntry> | null = null;
  try {
    entry = JSON.parse(text) as Partial<VaultEntry> | null;
  } catch {
    // malformed: refused below
  }
  if (entry?.v === 1 && typeof entry.id === "string" && typeof entry.k === "string" && typeof entry.w === "string") return entry as VaultEntry;
  throw new IntegrityError(key, "tampered", `the key vault's entry for ${name} is malformed`);
}

/**
 * Per-scope keys for crypto-shredding: each session's data key is sealed under the
 * key of its scope (one per user), which is kept in a vault outside the store,
 * itself sealed under the app's master key. Destroying a scope's key in the vault
 * makes every copy of that scope's records unreadable, wherever the store's engine
 * kept them. Opened keys are cached by their random id, so a key destroyed and made
 * again is never confused with the new one.
 */
export class ScopeKeys {
  readonly field: string;
  readonly #vault: KeyVault;
  readonly #opened = new Map<string, { name: string; key: KeyObject }>();

  constructor(
    options: ScopeKeyOptions,
    private readonly ring: KeyRing,
    private readonly cacheSize: number,
  ) {
    if (typeof options !== "object" || options === null || typeof options.field !== "string" || options.field.length === 0) {
      throw new MemoriaError("INVALID_ARGUMENT", 'scopeKeys needs { field, vault }, e.g. { field: "userId", vault: fileKeyVault(dir) }.');
    }
    const vault = options.vault as Partial<KeyVault> | undefined;
    if (!vault || !["get", "create", "replace", "destroy"].every((call) => typeof vault[call as keyof KeyVault] === "function")) {
      throw new MemoriaError("INVALID_ARGUMENT", "scopeKeys.vault must have get, create, replace and destroy (see fileKeyVault).");
    }
    this.field = options.field;
    this.#vault = options.vault;
  }

  /** The vault name of the scope a stored key belongs to, or undefined when it has no such field. */
  nameOf(stored: SessionKey | Readonly<Record<string, string>>): string | undefined {
    const value = stored[this.field];
    return value === undefined ? undefined : encodeSessionKey(createSessionKey({ [this.field]: value }));
  }

  /**
   * The scope's key, to seal a new data key under: asked of the vault every time (an
   * erasure in another process may have destroyed it), and made if there is none.
   */
  async forWrap(key: SessionKey, name: string): Promise<{ id: string; key: KeyObject }> {
    let entry = await this.#read(key, name);
    if (!entry) {
      const made = await this.#sealed(name, randomId(), randomBytes(32));
      const stored = await outsideCall(`The key vault failed to store the key of ${name}`, "not-stored", () => this.#vault.create(name, made));
      entry = parseEntry(key, name, stored); // the first writer's, where another process made one meanwhile
    }
    return this.#open(key, name, entry);
  }

  /** The scope key `id` of scope `name`, to open a data key sealed under it. */
  async forUnwrap(key: SessionKey, name: string, id: string): Promise<KeyObject> {
    const cached = this.#opened.get(id);
    if (cached?.name === name) return cached.key;
    const entry = await this.#read(key, name);
    if (!entry) throw new IntegrityError(key, "shredded", `its data key is sealed under the key of ${name}, which the key vault no longer holds (erased)`);
    if (entry.id !== id) throw new IntegrityError(key, "shredded", `its data key is sealed under an earlier key of ${name}, destroyed by an erasure`);
    return (await this.#open(key, name, entry)).key;
  }

  /** Seals the scope's key in the vault under the active master key; true if it was under another. */
  async rewrap(key: SessionKey, name: string): Promise<boolean> {
    const entry = await this.#read(key, name);
    if (!entry || entry.k === this.ring.activeKeyId) return false;
    const opened = await this.#open(key, name, entry);
    const rewrapped = await this.#sealed(name, opened.id, opened.key.export());
    await outsideCall(`The key vault failed to store the key of ${name}`, "unknown", () => this.#vault.replace(name, rewrapped));
    return true;
  }

  /** Destroys the scope's key: what was sealed under it can no longer be opened, anywhere. */
  async destroy(name: string): Promise<boolean> {
    for (const [id, opened] of this.#opened) if (opened.name === name) this.#opened.delete(id);
    return outsideCall(`The key vault failed to destroy the key of ${name}`, "unknown", () => this.#vault.destroy(name));
  }

  /** The scope's vault entry, checked, or undefined when the vault holds none. */
  async #read(key: SessionKey, name: string): Promise<VaultEntry | undefined> {
    const text = await outsideCall(`The key vault failed to read the key of ${name}`, "not-stored", () => this.#vault.get(name));
    return text === undefined ? undefined : parseEntry(key, name, text);
  }

  /** A vault entry for scope key `id` (`bytes`), sealed under the active master key. */
  async #sealed(name: string, id: string, bytes: Buffer): Promise<string> {
    const entry: VaultEntry = { v: 1, id, k: this.ring.activeKeyId, w: seal(await this.ring.active(), bytes, entryAad(name, id)) };
    return JSON.stringify(entry);
  }

  async #open(key: SessionKey, name: string, entry: VaultEntry): Promise<{ id: string; key: KeyObject }> {
    const cached = this.#opened.get(entry.id);
    if (cached?.name === name) return { id: entry.id, key: cached.key };
    const master = await this.ring.get(entry.k);
    if (!master) throw new IntegrityError(key, "unknown-key", `the key of ${name} is sealed under master key "${entry.k}", which the key ring does not hold`);
    const bytes = open(master, entry.w, entryAad(name, entry.id));
    if (bytes?.length !== 32) throw new IntegrityError(key, "tampered", `the key vault's entry for ${name} does not open with master key "${entry.k}"`);
    const opened = { id: entry.id, key: createSecretKey(bytes) };
    if (this.#opened.size >= this.cacheSize) this.#opened.delete(this.#opened.keys().next().value as string);
    this.#opened.set(entry.id, { name, key: opened.key });
    return opened;
  }
}
