import type { QueryTerm, RecallHit, RecallIndex, RecallItem, RecallSelector } from "@memoria/core";
import { HeldRecallItems } from "./held-recall-items.js";
import { checkRecallK, checkRecallSelector } from "./index-checks.js";
import { unitVector } from "./vectors.js";

/**
 * Every vector in this process's memory, searched by an exact scan (a dot product
 * per item), and every item's terms, ranked by BM25: for tests, small apps and the
 * stores with no index of their own. It keeps nothing across restarts.
 */
export function exactIndex(): RecallIndex {
  const scopes = new Map<string, HeldRecallItems>();
  return {
    name: "exact",
    async upsert(items: readonly RecallItem[]) {
      for (const item of items) {
        let held = scopes.get(item.scope);
        if (!held) {
          held = new HeldRecallItems();
          scopes.set(item.scope, held);
        }
        held.set({ session: item.session, position: item.position, at: item.at, vector: unitVector(item.vector) }, item.terms);
      }
    },
    async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      return scopes.get(scope)?.nearest(vector, k) ?? [];
    },
    async searchTerms(scope: string, query: readonly (string | QueryTerm)[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      return scopes.get(scope)?.matching(query, k) ?? [];
    },
    async remove(selector: RecallSelector): Promise<number> {
      checkRecallSelector(selector);
      const sessions = selector.sessions ? new Set(selector.sessions) : undefined;
      let removed = 0;
      for (const [scope, held] of scopes) {
        if (selector.scope !== undefined && scope !== selector.scope) continue;
        for (const item of held.places()) {
          if (sessions && !sessions.has(item.session)) continue;
          if (selector.before !== undefined && item.at >= selector.before) continue;
          held.delete(item);
          removed++;
        }
        if (held.size === 0) scopes.delete(scope);
      }
      return removed;
    },
  };
}
