import {
  type InfoPage,
  type ListOptions,
  type SessionInfo,
  type SessionKeyFilter,
  afterCursor,
  byRecent,
  createKeyFilter,
  decodeSessionKey,
  listedBy,
  listLimit,
  parseRecentCursor,
  recentCursor,
  sessionInfo,
} from "@memoria/core";
import type { KeyLayout } from "./key-layout.js";
import type { RedisClient } from "./scripts.js";

const PAGE = 200;

interface Entry {
  id: string;
  lastActiveAt: number;
}

/**
 * The members of an activity set, newest first, ties by id, from just after the
 * cursor. A page that comes back full may end inside a group of equal scores, so
 * that group is fetched whole (by score) before going on below it.
 */
async function* byActivity(r: RedisClient, set: string, after: Entry | undefined): AsyncGenerator<Entry> {
  let max = "+inf";
  if (after) {
    const tied = await r.zrangebyscore(set, after.lastActiveAt, after.lastActiveAt);
    for (const id of tied) if (afterCursor(after, after.lastActiveAt, id)) yield { id, lastActiveAt: after.lastActiveAt };
    max = `(${after.lastActiveAt}`;
  }
  for (;;) {
    const flat = await r.zrevrangebyscore(set, max, "-inf", "WITHSCORES", "LIMIT", 0, PAGE);
    const entries: Entry[] = [];
    for (let i = 0; i < flat.length; i += 2) entries.push({ id: flat[i] as string, lastActiveAt: Number(flat[i + 1]) });
    const full = entries.length === PAGE;
    const lastScore = entries[entries.length - 1]?.lastActiveAt;
    yield* (full ? entries.filter((entry) => entry.lastActiveAt !== lastScore) : entries).sort(byRecent);
    if (!full || lastScore === undefined) return;
    for (const id of await r.zrangebyscore(set, lastScore, lastScore)) yield { id, lastActiveAt: lastScore };
    max = `(${lastScore}`;
  }
}

/** A session's key record (present while it lives), info hash and length, in one pipeline (its keys share a slot). */
async function readInfo(r: RedisClient, layout: KeyLayout, id: string): Promise<SessionInfo | undefined> {
  const keys = layout.session(id);
  const replies = (await r.pipeline().exists(keys.key).hgetall(keys.info).llen(keys.messages).exec()) ?? [];
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0];
  const [exists, hash, count] = replies.map(([, value]) => value);
  if (Number(exists) === 0) return undefined;
  const fields = hash as Record<string, string>;
  const lastActiveAt = Number(fields.a ?? 0);
  return sessionInfo(decodeSessionKey(id), {
    createdAt: Number(fields.c ?? lastActiveAt),
    lastActiveAt,
    messageCount: Number(count),
    title: fields.ti,
    metadata: fields.md,
  });
}

/** Several sessions' info at once: one pipeline each, sent together (on a Cluster each goes to its session's node). */
function readInfos(r: RedisClient, layout: KeyLayout, ids: string[]): Promise<(SessionInfo | undefined)[]> {
  return Promise.all(ids.map((id) => readInfo(r, layout, id)));
}

export const infoOf = readInfo;

/**
 * Sessions by activity from the activity set of the filter's first field (or of
 * all sessions), the other fields checked on the decoded key. Entries whose
 * session expired or was half-written are dropped from the set as they are met.
 */
export async function recentSessions(r: RedisClient, layout: KeyLayout, filter: SessionKeyFilter | undefined, options: ListOptions | undefined): Promise<InfoPage> {
  const match = createKeyFilter(filter);
  const limit = listLimit(options);
  const after = parseRecentCursor(options?.cursor);
  const [first] = Object.entries(match);
  const set = layout.recentOf(first ? layout.fieldIndex(first[0], first[1]) : layout.allSessions);
  const found: SessionInfo[] = [];
  const ids: string[] = [];
  let batch: Entry[] = [];
  const flush = async () => {
    const infos = await readInfos(r, layout, batch.map((entry) => entry.id));
    for (const [i, info] of infos.entries()) {
      const entry = batch[i] as Entry;
      if (!info) {
        await r.zrem(set, entry.id);
        continue;
      }
      if (found.length <= limit) {
        found.push({ ...info, lastActiveAt: entry.lastActiveAt });
        ids.push(entry.id);
      }
    }
    batch = [];
  };
  for await (const entry of byActivity(r, set, after)) {
    if (!listedBy(decodeSessionKey(entry.id), match)) continue;
    batch.push(entry);
    if (found.length + batch.length > limit) await flush();
    if (found.length > limit) break;
  }
  await flush();
  const sessions = found.slice(0, limit);
  const page: InfoPage = { sessions };
  const last = sessions[sessions.length - 1];
  if (found.length > limit && last) page.cursor = recentCursor(last.lastActiveAt, ids[sessions.length - 1] as string);
  return page;
}
