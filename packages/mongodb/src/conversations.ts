import {
  type InfoPage,
  type ListOptions,
  type SessionInfo,
  type SessionKeyFilter,
  createKeyFilter,
  createSessionKey,
  listLimit,
  parseRecentCursor,
  recentCursor,
  sessionInfo,
  withoutScopes,
} from "@memoria/core";
import type { Collection, Filter } from "mongodb";
import type { SessionDoc } from "./documents.js";

/** A session document's info; a document from before conversation info counts its activity as unknown (0). */
export function infoOf(doc: SessionDoc): SessionInfo {
  const lastActiveAt = doc.a ?? 0;
  return sessionInfo(createSessionKey(doc.k), {
    createdAt: doc.c ?? lastActiveAt,
    lastActiveAt,
    messageCount: doc.n - (doc.b ?? 0),
    title: doc.ti,
    metadata: doc.md,
  });
}

/** Newest activity first, from the `(kf, a, _id)` or `(a, _id)` index. */
export async function recentSessions(sessions: Collection<SessionDoc>, filter: SessionKeyFilter | undefined, options: ListOptions | undefined): Promise<InfoPage> {
  const match = createKeyFilter(filter);
  const limit = listLimit(options);
  const after = parseRecentCursor(options?.cursor);
  const conditions: Filter<SessionDoc>[] = [{ $or: [{ e: null }, { e: { $exists: false } }, { e: { $gt: Date.now() } }] }];
  const fields = Object.keys(match).map((f) => `${f}=${match[f]}`);
  if (fields.length) conditions.push({ kf: { $all: fields } });
  if (after) conditions.push({ $or: [{ a: { $lt: after.lastActiveAt } }, { a: after.lastActiveAt, _id: { $gt: after.id } }] });
  const rows = await sessions
    .find({ $and: conditions }, { projection: { lock: 0, turn: 0, pending: 0 } })
    .sort({ a: -1, _id: 1 })
    .limit(limit + 1)
    .toArray();
  const page = rows.slice(0, limit) as SessionDoc[];
  const result: InfoPage = { sessions: withoutScopes(page.map(infoOf), (info) => info.key, filter) };
  const last = page[page.length - 1];
  if (rows.length > limit && last) result.cursor = recentCursor(last.a ?? 0, last._id);
  return result;
}
