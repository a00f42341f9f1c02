import { type RecallHit, type RecallIndex, type RecallItem, type RecallSelector, checkRecallK, checkRecallSelector, dotProduct, topK, unitVector } from "@memoria/core";

interface Held {
  session: string;
  position: number;
  at: number;
  vector: Float32Array;
}

/**
 * Every vector in this process's memory, searched by an exact scan (a dot product
 * per item): for tests and small apps. It keeps nothing across restarts.
 */
export function exactIndex(): RecallIndex {
  const scopes = new Map<string, Map<string, Held>>();
  return {
    name: "exact",
    async upsert(items: readonly RecallItem[]) {
      for (const item of items) {
        let held = scopes.get(item.scope);
        if (!held) {
          held = new Map();
          scopes.set(item.scope, held);
        }
        held.set(`${item.session}\u0000${item.position}`, { session: item.session, position: item.position, at: item.at, vector: unitVector(item.vector) });
      }
    },
    async search(scope: string, vector: readonly number[], k: number): Promise<RecallHit[]> {
      checkRecallK(k);
      const query = unitVector(vector);
      function* scored(): Generator<RecallHit> {
        for (const item of scopes.get(scope)?.values() ?? []) yield { session: item.session, position: item.position, at: item.at, score: dotProduct(item.vector, query) };
      }
      return topK(scored(), k);
    },
    async remove(selector: RecallSelector): Promise<number> {
      checkRecallSelector(selector);
      const sessions = selector.sessions ? new Set(selector.sessions) : undefined;
      let removed = 0;
      for (const [scope, held] of scopes) {
        if (selector.scope !== undefined && scope !== selector.scope) continue;
        for (const [id, item] of held) {
          if (sessions && !sessions.has(item.session)) continue;
          if (selector.before !== undefined && item.at >= selector.before) continue;
          held.delete(id);
          removed++;
        }
        if (held.size === 0) scopes.delete(scope);
      }
      return removed;
    },
  };
}
