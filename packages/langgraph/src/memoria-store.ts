import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  getTextAtPath,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";
import { type HistoryStore, type JsonValue, MemoriaError, SCOPE_FIELD, type SessionKey, createKeyFilter, scopeKeyOf } from "@memoria/core";
import { dotProduct, unitVector } from "@memoria/recall";
import {
  type ItemTtl,
  type StoreTtlOptions,
  checkTtlOptions,
  expiryFields,
  isExpired,
  parseRenewal,
  refreshes,
  renewalFor,
  renewalName,
  ttlOf,
} from "./item-ttl.js";
import { type Entry, ScopeItems } from "./scope-items.js";
import { type ItemRecord, emptied, itemName, itemValue, matchesFilter, parseItem, toItem } from "./store-items.js";

/** Which memoria scope a namespace's items live in: the scope's fields, and their values for a namespace. */
export interface NamespaceScope {
  fields: readonly string[];
  of(namespace: readonly string[]): Record<string, string | undefined>;
}

export interface MemoriaStoreOptions {
  /** Where items live: any memoria `HistoryStore`, bare or wrapped. */
  store: HistoryStore;
  /**
   * The memoria scope of a namespace. With `{ fields: ["userId"], of: (ns) => ({ userId: ns[1] }) }`,
   * the items of `["memories", "ada"]` live with Ada's long-term memory and
   * `store.delete({ userId: "ada" })` erases them with it.
   * @default one scope per first label: `{ storeNamespace: namespace[0] }`
   */
  scope?: NamespaceScope;
  /** Embeds items' texts for `search({ query })`, as LangGraph's `InMemoryStore` does. */
  index?: { embeddings: EmbeddingsInterface; fields?: string[]; dims?: number };
  /**
   * Items that expire, as LangGraph's Python store has them: `defaultTtl` minutes for
   * every put that names none (`put(…, { ttl })` names its own, `null` for never),
   * renewed by the reads that return them unless `refreshOnRead` is false.
   * @default items never expire
   */
  ttl?: StoreTtlOptions;
}

/** A put that may name its item's life in minutes (null: never expires). */
type PutWithTtl = PutOperation & { ttl?: ItemTtl };
/** A read that may say whether it renews the expiry of what it returns. */
type Refreshing<Op> = Op & { refreshTtl?: boolean };

const BY_FIRST_LABEL: NamespaceScope = { fields: ["storeNamespace"], of: (namespace) => ({ storeNamespace: namespace[0] }) };

/**
 * LangGraph's long-term `BaseStore` on any memoria store: `createAgent({ store: new
 * MemoriaStore({ store }) })`. A namespace's items are state values of a memoria
 * scope record, so they are kept, encrypted, expired and erased with the rest of the
 * scope's long-term memory.
 */
export class MemoriaStore extends BaseStore {
  readonly store: HistoryStore;
  readonly #scope: NamespaceScope;
  readonly #index: MemoriaStoreOptions["index"];
  readonly #ttl: StoreTtlOptions | undefined;
  readonly #items: ScopeItems;

  constructor(options: MemoriaStoreOptions) {
    super();
    if (!options?.store) throw new MemoriaError("INVALID_ARGUMENT", "MemoriaStore needs a store, e.g. new MemoriaStore({ store: createSqliteStore() }).");
    this.store = options.store;
    this.#scope = options.scope ?? BY_FIRST_LABEL;
    if (!Array.isArray(this.#scope.fields) || this.#scope.fields.length === 0 || typeof this.#scope.of !== "function") {
      throw new MemoriaError(
        "INVALID_ARGUMENT",
        'MemoriaStore\'s scope needs fields and of(namespace), e.g. { fields: ["userId"], of: (ns) => ({ userId: ns[1] }) }.',
      );
    }
    this.#index = options.index;
    this.#ttl = checkTtlOptions(options.ttl);
    this.#items = new ScopeItems(this.store);
  }

  /** As LangGraph's `put`, with the item's own life: `{ ttl: minutes }`, or `{ ttl: null }` for never. */
  override async put(namespace: string[], key: string, value: Record<string, unknown>, index?: false | string[], options?: { ttl?: ItemTtl }): Promise<void> {
    validateNamespace(namespace);
    await this.batch([{ namespace, key, value, index, ttl: options?.ttl } as PutWithTtl]);
  }

  /** As LangGraph's `get`; `refreshTtl: false` reads without renewing the item's expiry. */
  override async get(namespace: string[], key: string, options?: { refreshTtl?: boolean }): Promise<Item | null> {
    validateNamespace(namespace, { allowEmpty: true, allowReservedRoot: true });
    return (await this.batch([{ namespace, key, refreshTtl: options?.refreshTtl } as Refreshing<GetOperation>]))[0] as Item | null;
  }

  /** As LangGraph's `search`; `refreshTtl: false` reads without renewing the expiry of what it finds. */
  override async search(namespacePrefix: string[], options: Parameters<BaseStore["search"]>[1] & { refreshTtl?: boolean } = {}): Promise<SearchItem[]> {
    validateNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const { filter, limit = 10, offset = 0, query, refreshTtl } = options;
    return (await this.batch([{ namespacePrefix, filter, limit, offset, query, refreshTtl } as Refreshing<SearchOperation>]))[0] as SearchItem[];
  }

  /**
   * Empties every expired item (its value and vectors leave the store, as a delete
   * leaves it) in the scopes a namespace prefix reaches; returns how many. Reads never
   * return an expired item, swept or not: run this on a schedule to reclaim the space.
   */
  async sweep(namespacePrefix: string[] = []): Promise<number> {
    validateNamespace(namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const now = Date.now();
    let swept = 0;
    for (const { key, name, record, renewal } of await this.#entries(namespacePrefix)) {
      if (!startsWith(record.ns, namespacePrefix) || !isExpired(record, now, renewal)) continue;
      // Read again just before emptying it: an item written or renewed since the listing stays.
      const current = await this.#read(key, name);
      if (!current.record?.value || !isExpired(current.record, now, current.renewal)) continue;
      await this.#items.write(key, { [name]: emptied(current.record, new Date(now).toISOString()) as unknown as JsonValue });
      swept++;
    }
    return swept;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) {
      if ("namespacePrefix" in op) results.push(await this.#search(op));
      else if ("value" in op) results.push(await this.#put(op));
      else if ("namespace" in op) results.push(await this.#get(op));
      else results.push(await this.#listNamespaces(op));
    }
    return results as OperationResults<Op>;
  }

  async #get(op: Refreshing<GetOperation>): Promise<Item | null> {
    validateNamespace(op.namespace, { allowEmpty: true, allowReservedRoot: true });
    const key = this.#keyOf(op.namespace);
    const name = itemName(op.namespace, op.key);
    const { record, renewal } = await this.#read(key, name);
    if (!record?.value || isExpired(record, Date.now(), renewal)) return null;
    if (refreshes(op.refreshTtl, this.#ttl)) await this.#renew([{ key, name, record }]);
    return toItem(record);
  }

  /** One item as stored, with its renewal when it is one that expires. */
  async #read(key: SessionKey, name: string): Promise<Partial<Entry>> {
    const record = parseItem(await this.store.getState(key, name), name);
    const renewal = record?.ttl === undefined ? undefined : parseRenewal(await this.store.getState(key, renewalName(name)));
    return { record, renewal };
  }

  /** Moves the expiry of items that have one to `ttl` minutes from now, writing their renewals, never the items. */
  async #renew(entries: readonly Entry[]): Promise<void> {
    const now = Date.now();
    const byScope = new Map<SessionKey, Record<string, JsonValue>>();
    for (const { key, name, record } of entries) {
      if (record.ttl === undefined) continue;
      const values = byScope.get(key) ?? (byScope.set(key, {}).get(key) as Record<string, JsonValue>);
      values[renewalName(name)] = renewalFor(record as ItemRecord & { ttl: number }, now) as unknown as JsonValue;
    }
    for (const [key, values] of byScope) await this.#items.write(key, values);
  }

  async #put(op: PutWithTtl): Promise<void> {
    validateNamespace(op.namespace);
    if (typeof op.key !== "string" || op.key.length === 0) throw new MemoriaError("INVALID_ARGUMENT", "A store item needs a non-empty string key.");
    const key = this.#keyOf(op.namespace);
    const name = itemName(op.namespace, op.key);
    const { record: existing, renewal } = await this.#read(key, name);
    const at = Date.now();
    const now = new Date(at).toISOString();
    if (op.value === null) {
      if (existing?.value) await this.#items.write(key, { [name]: emptied(existing, now) as unknown as JsonValue });
      return;
    }
    const value = itemValue(op.value, op.key);
    const ttl = ttlOf(op.ttl, this.#ttl);
    // An expired item written again is a new item, as if it had been swept.
    const live = existing?.value && !isExpired(existing, at, renewal) ? existing : undefined;
    const record: ItemRecord = {
      v: 1,
      ns: [...op.namespace],
      key: op.key,
      value,
      createdAt: live ? live.createdAt : now,
      updatedAt: now,
      ...expiryFields(ttl, at),
    };
    const vectors = await this.#embed(value, op.index);
    if (vectors) record.vectors = vectors;
    await this.#items.write(key, { [name]: record as unknown as JsonValue });
  }

  async #search(op: Refreshing<SearchOperation>): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const limit = op.limit ?? 10;
    const offset = op.offset ?? 0;
    const entries = (await this.#live(op.namespacePrefix)).filter(
      ({ record }) => startsWith(record.ns, op.namespacePrefix) && matchesFilter(record.value as Record<string, never>, op.filter),
    );
    let found: { entry: Entry; score?: number }[];
    if (op.query && this.#index) {
      const query = unitVector(await this.#index.embeddings.embedQuery(op.query));
      found = entries.map((entry) => ({
        entry,
        score: this.#scoreOf(query, this.#items.unitVectors(entry.record)),
      }));
      found.sort((a, b) => (b.score ?? Number.NEGATIVE_INFINITY) - (a.score ?? Number.NEGATIVE_INFINITY));
    } else {
      found = entries.sort(({ record: a }, { record: b }) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0)).map((entry) => ({ entry }));
    }
    const page = found.slice(offset, offset + limit);
    if (refreshes(op.refreshTtl, this.#ttl)) await this.#renew(page.map(({ entry }) => entry));
    return page.map(({ entry, score }) => ({ ...toItem(entry.record), score }));
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const seen = new Map<string, string[]>();
    for (const { record } of await this.#live([])) {
      if (!(op.matchConditions ?? []).every((condition) => matches(condition, record.ns))) continue;
      const namespace = op.maxDepth === undefined ? record.ns : record.ns.slice(0, op.maxDepth);
      seen.set(JSON.stringify(namespace), namespace);
    }
    const namespaces = [...seen.values()].sort((a, b) => a.join(":").localeCompare(b.join(":")));
    return namespaces.slice(op.offset ?? 0, (op.offset ?? 0) + (op.limit ?? namespaces.length));
  }

  /** The item's best cosine similarity to the query, as the dot product of unit vectors; undefined for an item with no vectors. */
  #scoreOf(query: Float32Array, vectors: readonly Float32Array[]): number | undefined {
    let best: number | undefined;
    for (const vector of vectors) best = Math.max(best ?? Number.NEGATIVE_INFINITY, dotProduct(query, vector));
    return best;
  }

  #keyOf(namespace: readonly string[]): SessionKey {
    return scopeKeyOf(createKeyFilter(this.#fieldsOf(namespace) ?? this.#scope.of(namespace)));
  }

  /** The scope's field values for a namespace, or undefined when it does not name them all (a short prefix). */
  #fieldsOf(namespace: readonly string[]): Record<string, string> | undefined {
    const values = this.#scope.of(namespace);
    return this.#scope.fields.every((field) => typeof values[field] === "string" && values[field] !== "") ? (values as Record<string, string>) : undefined;
  }

  /** Every item that holds a value, expired or not, of the scopes a namespace prefix can reach: one scope when the prefix names it, else all. */
  async #entries(prefix: readonly string[]): Promise<Entry[]> {
    const named = prefix.length > 0 ? this.#fieldsOf(prefix) : undefined;
    const keys: SessionKey[] = named ? [scopeKeyOf(createKeyFilter(named))] : await this.#allScopes();
    const out: Entry[] = [];
    for (const key of keys) out.push(...(await this.#items.entries(key)));
    return out;
  }

  /** The items reads see: those not expired. */
  async #live(prefix: readonly string[]): Promise<Entry[]> {
    const now = Date.now();
    return (await this.#entries(prefix)).filter(({ record, renewal }) => !isExpired(record, now, renewal));
  }

  async #allScopes(): Promise<SessionKey[]> {
    const filter = createKeyFilter({ [SCOPE_FIELD]: [...this.#scope.fields].sort().join("+") });
    const keys: SessionKey[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list(filter, cursor === undefined ? {} : { cursor });
      keys.push(...page.sessions);
      cursor = page.cursor;
    } while (cursor !== undefined);
    return keys;
  }

  async #embed(value: Record<string, unknown>, index: PutOperation["index"]): Promise<number[][] | undefined> {
    if (!this.#index || index === false) return undefined;
    const paths = index ?? this.#index.fields ?? ["$"];
    const texts = paths.flatMap((path) => getTextAtPath(value, path));
    if (texts.length === 0) return undefined;
    return this.#index.embeddings.embedDocuments(texts);
  }
}

function startsWith(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}

function matches(condition: MatchCondition, namespace: readonly string[]): boolean {
  const { path, matchType } = condition;
  if (path.length > namespace.length) return false;
  const at = matchType === "prefix" ? 0 : namespace.length - path.length;
  return path.every((label, i) => label === "*" || namespace[at + i] === label);
}
