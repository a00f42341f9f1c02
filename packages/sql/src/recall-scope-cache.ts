import { totalmem } from "node:os";
import { MemoriaError, type RecallItem } from "@memoria/core";
import { type HeldRecallItems, unitVector } from "@memoria/recall";

/** The option of the stores that hold recall scopes in the process (SQLite, PostgreSQL). */
export interface HeldRecallOptions {
  /**
   * Bytes of recall memory's index this process may hold, so recall ranks a user's
   * items in memory rather than in a statement over all of them (an estimate: vectors,
   * terms and the objects around them). A held scope is checked against the
   * database's version of it before every query, so another process's writes are
   * seen; least recently used scopes go first; 0 ranks every query in SQL.
   * @default a sixteenth of the memory this process may use (its cgroup's limit where it has one), between 32 and 512 MiB
   */
  recallCacheBytes?: number;
}

const MIB = 1024 * 1024;

/** What `recallCacheBytes` is when not given: a sixteenth of the memory this process may use, between 32 and 512 MiB. */
export function defaultRecallCacheBytes(): number {
  const limit = process.constrainedMemory?.();
  const memory = limit !== undefined && limit > 0 ? Math.min(limit, totalmem()) : totalmem();
  return Math.min(512 * MIB, Math.max(32 * MIB, Math.floor(memory / 16)));
}

/** The options' `recallCacheBytes`, checked, or its default. */
export function recallCacheBytesOf(options: HeldRecallOptions): number {
  const bytes = options.recallCacheBytes;
  if (bytes !== undefined && !(Number.isSafeInteger(bytes) && bytes >= 0)) {
    throw new MemoriaError("INVALID_ARGUMENT", `recallCacheBytes must be a whole number of bytes >= 0, got ${bytes}.`);
  }
  return bytes ?? defaultRecallCacheBytes();
}

/** A scope's items as loaded, with what holding them costs (an estimate, in bytes). */
export interface LoadedScope {
  items: HeldRecallItems;
  bytes: number;
}

/** What an item held costs beyond its vector: the objects around it, and each of its terms in both directions of the lexical index. */
const ITEM_BYTES = 240;
const TERM_BYTES = 120;

/**
 * An estimate of the bytes `items` items with `vectorBytes` of vectors and `terms`
 * terms in all take once held; vectors twice, as the slab they go to grows by doubling.
 */
export function heldBytes(items: number, vectorBytes: number, terms: number): number {
  return items * ITEM_BYTES + 2 * vectorBytes + terms * TERM_BYTES;
}

interface Held extends LoadedScope {
  version: number;
}

/** How many scopes a cache remembers having seen once, before it forgets them all. */
const SEEN_LIMIT = 10_000;

/**
 * Recall scopes held in this process, so a query ranks them in memory (the same
 * ranking as the SQL: `HeldRecallItems`) instead of running a statement over every
 * row. A held scope is used while the database's version of it (recall-versions.ts)
 * is the one it was loaded at; this process's own writes keep it current as they
 * commit (`written`), any other change is seen at the next query and the scope is
 * loaded again. A scope is loaded the second time a query finds it at the same
 * version, so a scope another process keeps changing is ranked by the SQL rather
 * than loaded for every query. Held scopes share a budget of bytes, the least
 * recently used going first; a scope larger than the budget is never held.
 */
export class RecallScopeCache {
  readonly #held = new Map<string, Held>();
  /** Scopes a query found unheld, at the version it found. */
  readonly #seen = new Map<string, number>();
  /** Scopes too large to hold, at the version they were measured. */
  readonly #tooLarge = new Map<string, number>();
  #bytes = 0;

  /**
   * @param budget bytes all held scopes may take together
   * @param load reads a scope at `version` ("too large": over `budget`; undefined: it changed while read)
   */
  constructor(
    readonly budget: number,
    private readonly load: (scope: string, version: number, budget: number) => Promise<LoadedScope | "too large" | undefined>,
  ) {}

  /** The scope's items, current at `version`; undefined where the SQL should rank instead. */
  async at(scope: string, version: number): Promise<HeldRecallItems | undefined> {
    const held = this.#held.get(scope);
    if (held?.version === version) {
      this.#held.delete(scope); // most recently used last
      this.#held.set(scope, held);
      return held.items;
    }
    if (held) this.#drop(scope);
    if (this.#tooLarge.get(scope) === version) return undefined;
    if (this.#seen.get(scope) !== version) {
      if (this.#seen.size >= SEEN_LIMIT) this.#seen.clear();
      this.#seen.set(scope, version);
      return undefined;
    }
    this.#seen.delete(scope);
    const loaded = await this.load(scope, version, this.budget);
    if (loaded === "too large") {
      if (this.#tooLarge.size >= SEEN_LIMIT) this.#tooLarge.clear();
      this.#tooLarge.set(scope, version);
      return undefined;
    }
    if (!loaded || this.#held.has(scope)) return loaded?.items;
    this.#hold(scope, { ...loaded, version });
    return loaded.items;
  }

  /** Whether `scope` is held, or was seen by a query: a write to it should say what it changed (`written`). */
  watches(scope: string): boolean {
    return this.#held.has(scope) || this.#seen.has(scope);
  }

  /**
   * This process's write of `stored` (the items it stored) moved `scope` from version
   * `before` to `after`: a scope held at `before` takes them and is current at `after`.
   * A scope a query saw at `before` counts as seen at `after`: the change is this
   * process's own, so the next query is the second at a version it knows, and loads it
   * (else a scope queried and then written every turn, as a chat's is, would never be held).
   */
  written(scope: string, before: number, after: number, stored: readonly RecallItem[]): void {
    if (this.#seen.get(scope) === before) this.#seen.set(scope, after);
    const held = this.#held.get(scope);
    if (!held) return;
    this.#drop(scope);
    if (held.version !== before) return;
    for (const item of stored) {
      held.items.set({ session: item.session, position: item.position, at: item.at, vector: unitVector(item.vector) }, item.terms);
      held.bytes += heldBytes(1, item.vector.length * 4, item.terms?.length ?? 0);
    }
    if (held.bytes <= this.budget) this.#hold(scope, { ...held, version: after });
  }

  /** Lets `scope` go, or every held scope (after an erasure, so nothing erased stays in this process). */
  forget(scope?: string): void {
    if (scope !== undefined) {
      this.#drop(scope);
      return;
    }
    this.#held.clear();
    this.#seen.clear();
    this.#tooLarge.clear();
    this.#bytes = 0;
  }

  #hold(scope: string, held: Held): void {
    this.#held.set(scope, held);
    this.#bytes += held.bytes;
    for (const [oldest, { bytes }] of this.#held) {
      if (this.#bytes <= this.budget || oldest === scope) break;
      this.#held.delete(oldest);
      this.#bytes -= bytes;
    }
  }

  #drop(scope: string): void {
    const held = this.#held.get(scope);
    if (!held) return;
    this.#held.delete(scope);
    this.#bytes -= held.bytes;
  }
}
