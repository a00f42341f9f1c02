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
import { type HistoryStore, MemoriaError, SCOPE_FIELD, type SessionKey, createKeyFilter, dotProduct, scopeKeyOf, unitVector } from "@memoria/core";
import { allStateOf } from "./records.js";
import { ITEM_PREFIX, type ItemRecord, itemName, itemValue, matchesFilter, parseItem } from "./store-items.js";

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
}

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

  constructor(options: MemoriaStoreOptions) {
    super();
    if (!options?.store) throw new MemoriaError("INVALID_ARGUMENT", "MemoriaStore needs a store, e.g. new MemoriaStore({ store: createSqliteStore() }).");
    this.store = options.store;
    this.#scope = options.scope ?? BY_FIRST_LABEL;
    if (!Array.isArray(this.#scope.fields) || this.#scope.fields.length === 0 || typeof this.#scope.of !== "function") {
      throw new MemoriaError("INVALID_ARGUMENT", 'MemoriaStore\'s scope needs fields and of(namespace), e.g. { fields: ["userId"], of: (ns) => ({ userId: ns[1] }) }.');
    }
    this.#index = options.index;
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

  async #get(op: GetOperation): Promise<Item | null> {
    validateNamespace(op.namespace, { allowEmpty: true, allowReservedRoot: true });
    const name = itemName(op.namespace, op.key);
    const record = parseItem(await this.store.getState(this.#keyOf(op.namespace), name), name);
    return record?.value ? toItem(record) : null;
  }

  async #put(op: PutOperation): Promise<void> {
    validateNamespace(op.namespace);
    if (typeof op.key !== "string" || op.key.length === 0) throw new MemoriaError("INVALID_ARGUMENT", "A store item needs a non-empty string key.");
    const key = this.#keyOf(op.namespace);
    const name = itemName(op.namespace, op.key);
    const existing = parseItem(await this.store.getState(key, name), name);
    const now = new Date().toISOString();
    if (op.value === null) {
      if (existing?.value) await this.store.setState(key, name, { v: 1, ns: [...op.namespace], key: op.key, createdAt: existing.createdAt, updatedAt: now });
      return;
    }
    const value = itemValue(op.value, op.key);
    const record: ItemRecord = { v: 1, ns: [...op.namespace], key: op.key, value, createdAt: existing?.value ? existing.createdAt : now, updatedAt: now };
    const vectors = await this.#embed(value, op.index);
    if (vectors) record.vectors = vectors;
    await this.store.setState(key, name, record as never);
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    validateNamespace(op.namespacePrefix, { allowEmpty: true, allowReservedRoot: true });
    const limit = op.limit ?? 10;
    const offset = op.offset ?? 0;
    const records = (await this.#records(op.namespacePrefix)).filter(
      (record) => startsWith(record.ns, op.namespacePrefix) && matchesFilter(record.value as Record<string, never>, op.filter),
    );
    if (op.query && this.#index) {
      // Cosine similarity, as the dot product of unit vectors.
      const query = unitVector(await this.#index.embeddings.embedQuery(op.query));
      const scored = records.map((record) => ({
        record,
        score: record.vectors?.length ? Math.max(...record.vectors.map((vector) => dotProduct(query, unitVector(vector)))) : undefined,
      }));
      scored.sort((a, b) => (b.score ?? Number.NEGATIVE_INFINITY) - (a.score ?? Number.NEGATIVE_INFINITY));
      return scored.slice(offset, offset + limit).map(({ record, score }) => ({ ...toItem(record), score }));
    }
    records.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    return records.slice(offset, offset + limit).map((record) => ({ ...toItem(record), score: undefined }));
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const seen = new Map<string, string[]>();
    for (const record of await this.#records([])) {
      if (!(op.matchConditions ?? []).every((condition) => matches(condition, record.ns))) continue;
      const namespace = op.maxDepth === undefined ? record.ns : record.ns.slice(0, op.maxDepth);
      seen.set(JSON.stringify(namespace), namespace);
    }
    const namespaces = [...seen.values()].sort((a, b) => a.join(":").localeCompare(b.join(":")));
    return namespaces.slice(op.offset ?? 0, (op.offset ?? 0) + (op.limit ?? namespaces.length));
  }

  #keyOf(namespace: readonly string[]): SessionKey {
    return scopeKeyOf(createKeyFilter(this.#fieldsOf(namespace) ?? this.#scope.of(namespace)));
  }

  /** The scope's field values for a namespace, or undefined when it does not name them all (a short prefix). */
  #fieldsOf(namespace: readonly string[]): Record<string, string> | undefined {
    const values = this.#scope.of(namespace);
    return this.#scope.fields.every((field) => typeof values[field] === "string" && values[field] !== "") ? (values as Record<string, string>) : undefined;
  }

  /** Every live item of the scopes a namespace prefix can reach: one scope when the prefix names it, else all. */
  async #records(prefix: readonly string[]): Promise<ItemRecord[]> {
    const named = prefix.length > 0 ? this.#fieldsOf(prefix) : undefined;
    const keys: SessionKey[] = named ? [scopeKeyOf(createKeyFilter(named))] : await this.#allScopes();
    const out: ItemRecord[] = [];
    for (const key of keys) {
      const state = await allStateOf(this.store, key, "MemoriaStore.search() and listNamespaces()");
      for (const [name, value] of Object.entries(state)) {
        if (!name.startsWith(ITEM_PREFIX)) continue;
        const record = parseItem(value, name);
        if (record?.value) out.push(record);
      }
    }
    return out;
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

function toItem(record: ItemRecord): Item {
  return { namespace: [...record.ns], key: record.key, value: record.value as Record<string, unknown>, createdAt: new Date(record.createdAt), updatedAt: new Date(record.updatedAt) };
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
