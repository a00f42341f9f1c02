import type { EngineInfo, SessionKeyFilter } from "@memoria/core/store-kit";
import type { Collection, Filter } from "mongodb";
import type { SessionDoc } from "./documents.js";

/** A session document's info; a document from before conversation info counts its activity as unknown (0). */
export function infoOf(doc: SessionDoc): EngineInfo {
  const lastActiveAt = doc.a ?? 0;
  return { id: doc._id, key: doc.k, createdAt: doc.c ?? lastActiveAt, lastActiveAt, messageCount: doc.n - (doc.b ?? 0), title: doc.ti, metadata: doc.md };
}

/** The live sessions holding every field of `match` (its `kf` entries), as a query. */
export function liveMatching(match: SessionKeyFilter): Filter<SessionDoc>[] {
  const conditions: Filter<SessionDoc>[] = [{ $or: [{ e: null }, { e: { $exists: false } }, { e: { $gt: Date.now() } }] }];
  const fields = Object.keys(match).map((f) => `${f}=${match[f]}`);
  if (fields.length) conditions.push({ kf: { $all: fields } });
  return conditions;
}

/** Newest activity first, after `after`, from the `(kf, a, _id)` or `(a, _id)` index. */
export async function recentSessions(
  sessions: Collection<SessionDoc>,
  match: SessionKeyFilter,
  page: { after: { lastActiveAt: number; id: string } | undefined; limit: number },
): Promise<EngineInfo[]> {
  const conditions = liveMatching(match);
  const { after } = page;
  if (after) conditions.push({ $or: [{ a: { $lt: after.lastActiveAt } }, { a: after.lastActiveAt, _id: { $gt: after.id } }] });
  const rows = await sessions
    .find({ $and: conditions }, { projection: { lock: 0, turn: 0, pending: 0 } })
    .sort({ a: -1, _id: 1 })
    .limit(page.limit)
    .toArray();
  return (rows as SessionDoc[]).map(infoOf);
}
