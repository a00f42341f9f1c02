import { createHash } from "node:crypto";
import {
  type QueryTerm,
  type JsonValue,
  MemoriaError,
  type RecallHit,
  type RecallIndex,
  type RecallItem,
  type RecallSelector,
  decodeSessionKey,
} from "@memoria/core";
import { randomId } from "@memoria/core/store-kit";
import { HeldRecallItems, checkRecallK, checkRecallSelector, unitVector } from "@memoria/recall";
import type { SealingContext } from "./encrypted-info.js";
import { openState, sealState, stateDataKeyId } from "./sealed-records.js";

/* Recall vectors kept in the scope record itself, as sealed state values: encrypted,
   erased, expired and rekeyed with the rest of the user's long-term memory. */

/** The state holding the scope's index version: any write changes it, so a cached copy knows when it is stale. */
const VERSION_STATE = "memoria.recall";
/** One state value per session of the scope: its items. */
const CHUNK_PREFIX = "memoria.recall.";

/** A chunk as stored: the session and its items, `[position, at, base64 of the float32 unit vector, terms?]`. */
interface Chunk {
  s: string;
  i: [number, number, string, string[]?][];
}

/** A scope record as the sealing calls name it: see `SealingContext.stored`. */
type Stored = ReturnType<SealingContext["stored"]>;

const chunkName = (session: string) => CHUNK_PREFIX + createHash("sha256").update(session).digest("hex").slice(0, 40);
const vectorText = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");

function vectorOf(text: string): Float32Array {
  const bytes = Buffer.from(text, "base64");
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/**
 * The recall index of an encrypted store: a scope's vectors and terms (embeddings
 * can be inverted into text, and terms are its words, so both are sealed like the
 * text) live in its scope record as sealed state values, one per session, and are
 * searched in a copy opened in this process (`HeldRecallItems`: vectors by an exact
 * scan, terms by BM25). The copy is checked against the scope's version (one small
 * state read) before each search, so items indexed by another process are seen.
 * Nothing of it is in the clear, and `delete({ userId })`, `rekey()` and a TTL reach
 * it with the scope record.
 */
export class SealedRecallIndex implements RecallIndex {
  readonly name = "sealed";
  readonly #cache = new Map<string, { version: string; opened: HeldRecallItems }>();

  constructor(private readonly ctx: SealingContext) {}

  async upsert(items: readonly RecallItem[]): Promise<void> {
    const byScope = new Map<string, RecallItem[]>();
    for (const item of items) byScope.set(item.scope, [...(byScope.get(item.scope) ?? []), item]);
    for (const [scope, scoped] of byScope) {
      await this.#rewrite(scope, (chunks) => {
        for (const item of scoped) {
          const name = chunkName(item.session);
          const chunk = chunks.get(name) ?? { s: item.session, i: [] };
          chunk.i = chunk.i.filter(([position]) => position !== item.position);
          const entry: Chunk["i"][number] = [item.position, item.at, vectorText(unitVector(item.vector))];
          if (item.terms) entry.push([...item.terms]);
          chunk.i.push(entry);
          chunks.set(name, chunk);
        }
        return [...new Set(scoped.map((item) => chunkName(item.session)))];
      });
    }
  }

  async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
    checkRecallK(k);
    return (await this.#opened(scope)).nearest(vector, k);
  }

  async searchTerms(scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]> {
    checkRecallK(k);
    return (await this.#opened(scope)).matching(query, k);
  }

  async remove(selector: RecallSelector): Promise<number> {
    checkRecallSelector(selector);
    if (selector.scope === undefined) {
      throw new MemoriaError(
        "INVALID_ARGUMENT",
        "The encrypted store's recall index removes within one scope: give remove() a scope (erasing a user's scope record erases its vectors).",
      );
    }
    const sessions = selector.sessions && new Set(selector.sessions);
    let removed = 0;
    await this.#rewrite(selector.scope, (chunks) => {
      const changed: string[] = [];
      for (const [name, chunk] of chunks) {
        if (sessions && !sessions.has(chunk.s)) continue;
        const kept = chunk.i.filter(([, at]) => selector.before !== undefined && at >= selector.before);
        if (kept.length === chunk.i.length) continue;
        removed += chunk.i.length - kept.length;
        chunk.i = kept;
        changed.push(name);
      }
      return changed;
    });
    return removed;
  }

  /** The scope's items, from the cached copy if the scope's version has not moved since it was opened. */
  async #opened(scope: string): Promise<HeldRecallItems> {
    const s = this.#record(scope);
    const version = await this.ctx.inner.getState(s.stored, VERSION_STATE);
    const opened = version === undefined ? undefined : ((await this.#open(s, VERSION_STATE, version)) as string);
    const cached = this.#cache.get(scope);
    if (opened !== undefined && cached?.version === opened) return cached.opened;
    const fresh = new HeldRecallItems();
    for (const chunk of (await this.#chunks(s)).values()) {
      for (const [position, at, vector, terms] of chunk.i) fresh.set({ session: chunk.s, position, at, vector: vectorOf(vector) }, terms);
    }
    if (opened !== undefined) this.#cache.set(scope, { version: opened, opened: fresh });
    return fresh;
  }

  /** The scope record that keeps the scope's vectors (`scope` is its encoded raw key). */
  #record(scope: string): Stored {
    return this.ctx.stored(decodeSessionKey(scope));
  }

  /** Every chunk of the scope record, opened, by state name. */
  async #chunks(s: Stored): Promise<Map<string, Chunk>> {
    const stored = await this.ctx.inner.getAllState(s.stored);
    const chunks = new Map<string, Chunk>();
    for (const name of Object.keys(stored)) {
      if (name.startsWith(CHUNK_PREFIX)) chunks.set(name, (await this.#open(s, name, stored[name] as JsonValue)) as unknown as Chunk);
    }
    return chunks;
  }

  async #open(s: Stored, name: string, value: JsonValue): Promise<JsonValue> {
    const envelope = stateDataKeyId(s.key, value);
    return openState(s.key, s.id, name, envelope, await this.ctx.keys.forRead(s.key, s.stored, envelope.dataKeyId));
  }

  /**
   * Reads the scope's chunks, lets `change` edit them (it returns the names it
   * changed), and writes those back with a new version. Writers are serialized by
   * recall memory's scope work, which holds the scope record's turn lock while it
   * indexes (taking the lock here would wait on that holder); another writer must
   * hold it too.
   */
  async #rewrite(scope: string, change: (chunks: Map<string, Chunk>) => string[]): Promise<void> {
    const s = this.#record(scope);
    const chunks = await this.#chunks(s);
    const changed = change(chunks);
    if (changed.length === 0) return;
    const { dataKey } = await this.ctx.keys.forWrite(s.key, s.stored, undefined);
    for (const name of changed) await this.ctx.inner.setState(s.stored, name, sealState(dataKey, s.id, name, chunks.get(name) as unknown as JsonValue));
    // A new version: every cached copy of the scope, here or in another process, reloads at its next search.
    await this.ctx.inner.setState(s.stored, VERSION_STATE, sealState(dataKey, s.id, VERSION_STATE, randomId()));
  }
}
