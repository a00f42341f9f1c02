import { MemoriaError } from "../errors.js";
import { listLimit, type ListOptions, type SessionPage } from "../history-store.js";
import { keyMatches, type SessionKeyFilter, createSessionKey, decodeSessionKey } from "../session-key.js";
import { listedBy } from "../scope-key.js";
import { type InfoPage, type SessionInfo, parseRecentCursor, recentCursor, recentPage, sessionInfo } from "../session-info.js";
import type { EngineInfo, EngineSession, StoreEngine } from "./store-engine.js";

/**
 * One page of `limit` items an engine gives in batches, keeping those `keep` says:
 * batches are asked for until the page is full or the engine has no more, so a
 * page of conversations is never cut short by the scope records among them. One
 * item past the page is looked for, so a cursor means there is more.
 */
async function keptPage<T, P>(
  fetch: (after: P | undefined, limit: number) => Promise<readonly T[]>,
  keep: (item: T) => boolean,
  position: (item: T) => P,
  start: P | undefined,
  limit: number,
): Promise<{ items: T[]; next?: P }> {
  const items: T[] = [];
  let after = start;
  for (;;) {
    const want = limit - items.length + 1;
    const batch = await fetch(after, want);
    for (const item of batch) {
      if (!keep(item)) continue;
      if (items.length === limit) return { items, next: position(items[items.length - 1] as T) };
      items.push(item);
    }
    if (batch.length < want) return { items };
    after = position(batch[batch.length - 1] as T);
  }
}

/** `list` on an engine: its ids narrowed to what the filter lists (scope records only when asked for). */
export async function listSessions(engine: StoreEngine, match: SessionKeyFilter, options: ListOptions | undefined): Promise<SessionPage> {
  const limit = listLimit(options);
  const cursor = options?.cursor;
  if (cursor !== undefined && (typeof cursor !== "string" || cursor === "")) {
    throw new MemoriaError("INVALID_ARGUMENT", 'list() option "cursor" must be the cursor of a page list() returned.');
  }
  const { items, next } = await keptPage(
    async (after, want) => (await engine.list(match, { after, limit: want })).map(sessionOf),
    (session) => listedBy(session.key, match),
    (session) => session.id,
    cursor,
    limit,
  );
  const sessions = items.map((session) => session.key);
  return next === undefined ? { sessions } : { sessions, cursor: next };
}

/** `recent` on an engine: its own newest-first pages, or a scan of `list` and `info` where it has none. */
export async function recentSessions(engine: StoreEngine, match: SessionKeyFilter, options: ListOptions | undefined): Promise<InfoPage> {
  const limit = listLimit(options);
  const recent = engine.recent?.bind(engine);
  if (!recent) return scannedRecent(engine, match, options);
  const { items, next } = await keptPage(
    async (after, want) => (await recent(match, { after, limit: want })).map((info) => ({ id: info.id, info: infoOf(info) })),
    (entry) => listedBy(entry.info.key, match),
    (entry) => ({ lastActiveAt: entry.info.lastActiveAt, id: entry.id }),
    parseRecentCursor(options?.cursor),
    limit,
  );
  const page: InfoPage = { sessions: items.map((entry) => entry.info) };
  if (next) page.cursor = recentCursor(next.lastActiveAt, next.id);
  return page;
}

/** `recent` without an activity index: the info of every session the filter lists, sorted here. */
async function scannedRecent(engine: StoreEngine, match: SessionKeyFilter, options: ListOptions | undefined): Promise<InfoPage> {
  const found: { id: string; lastActiveAt: number; info: SessionInfo }[] = [];
  for await (const session of sessionsMatching(engine, match)) {
    if (!listedBy(session.key, match)) continue; // a scope record: not shown, so not read
    const info = await engine.info(session);
    if (info) found.push({ id: info.id, lastActiveAt: info.lastActiveAt, info: sessionInfo(session.key, info) });
  }
  const { page, cursor } = recentPage(found, (entry) => entry.info.key, match, options);
  const result: InfoPage = { sessions: page.map((entry) => entry.info) };
  if (cursor) result.cursor = cursor;
  return result;
}

/** Every session whose key holds `match`'s fields, scope records included (erasure reaches them). */
export async function* sessionsMatching(engine: StoreEngine, match: SessionKeyFilter): AsyncGenerator<EngineSession> {
  const batch = 500;
  let after: string | undefined;
  for (;;) {
    const listed = (await engine.list(match, { after, limit: batch })).map(sessionOf);
    for (const session of listed) if (keyMatches(session.key, match)) yield session;
    if (listed.length < batch) return;
    after = listed[listed.length - 1]?.id;
  }
}

/** What an engine listed, as a session: its key as the engine kept it (checked here), or decoded from its id. */
const sessionOf = (listed: string | EngineSession): EngineSession =>
  typeof listed === "string" ? { key: decodeSessionKey(listed), id: listed } : { key: createSessionKey(listed.key), id: listed.id };

export function infoOf(info: EngineInfo): SessionInfo {
  return sessionInfo(info.key ? createSessionKey(info.key) : decodeSessionKey(info.id), info);
}
