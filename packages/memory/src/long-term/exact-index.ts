import { type RecallHit, type RecallIndex, type RecallItem, type RecallSelector, TermIndex, checkRecallK, checkRecallSelector, dotProduct, topK, unitVector } from "@memoria/core";

interface Held {
  session: string;
  position: number;
  at: number;
  vector: Float32Array;
}

/** A scope's items by id (session and position), and their terms. */
interface Scope {
  items: Map<string, Held>;
  terms: TermIndex<Held>;
}

const hitOf = (item: Held, score: number): RecallHit => ({ session: item.session, position: item.position, at: item.at, score });

/**
 * Every vector in this process's memory, searched by an exact scan (a dot product
 * per item), and every item's terms, ranked by BM25: for tests, small apps and the
 * stores with no index of their own. It keeps nothing across restarts.
 */
export function exactIndex(): RecallIndex {
  const scopes = new Map<string, Scope>();
  return {
    name: "exact",
    async upsert(items: readonly RecallItem[]) {
      for (const item of items) {
        let scope = scopes.get(item.scope);
        if (!scope) {
          scope = { items: new Map(), terms: new TermIndex() };
          scopes.set(item.scope, scope);
        }
        const id = `${item.session}\u0000${item.position}`;
        const held = { session: item.session, position: item.position, at: item.at, vector: unitVector(item.vector) };
        scope.items.set(id, held);
        if (item.terms) scope.terms.set(id, held, item.terms);
        else scope.terms.delete(id);
      }
    },
    async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      const query = unitVector(vector);
      function* scored(): Generator<RecallHit> {
        for (const item of scopes.get(scope)?.items.values() ?? []) yield hitOf(item, dotProduct(item.vector, query));
      }
      return topK(scored(), k);
    },
    async searchTerms(scope: string, terms: readonly string[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      return (scopes.get(scope)?.terms.search(terms, k) ?? []).map(({ value, score }) => hitOf(value, score));
    },
    async remove(selector: RecallSelector): Promise<number> {
      checkRecallSelector(selector);
      const sessions = selector.sessions ? new Set(selector.sessions) : undefined;
      let removed = 0;
      for (const [id, scope] of scopes) {
        if (selector.scope !== undefined && id !== selector.scope) continue;
        for (const [itemId, item] of scope.items) {
          if (sessions && !sessions.has(item.session)) continue;
          if (selector.before !== undefined && item.at >= selector.before) continue;
          scope.items.delete(itemId);
          scope.terms.delete(itemId);
          removed++;
        }
        if (scope.items.size === 0) scopes.delete(id);
      }
      return removed;
    },
  };
}
