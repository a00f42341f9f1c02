import { type EngineInfo, type SessionKeyFilter, afterCursor, byRecent } from "@memoria/core/store-kit";
import type { KeyLayout } from "./key-layout.js";
import { type RedisClient, dropStaleEntry } from "./scripts.js";

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

/** A session's key record (present while it lives: the key as written), info hash and length, in one pipeline (its keys share a slot). */
export async function infoOf(r: RedisClient, layout: KeyLayout, id: string): Promise<EngineInfo | undefined> {
  const keys = layout.session(id);
  const replies = (await r.pipeline().get(keys.key).hgetall(keys.info).llen(keys.messages).exec()) ?? [];
  const failed = replies.find(([error]) => error);
  if (failed) throw failed[0];
  const [written, hash, count] = replies.map(([, value]) => value);
  if (written === null) return undefined;
  const fields = hash as Record<string, string>;
  const lastActiveAt = Number(fields.a ?? 0);
  return {
    id,
    key: JSON.parse(written as string),
    createdAt: Number(fields.c ?? lastActiveAt),
    lastActiveAt,
    messageCount: Number(count),
    title: fields.ti,
    metadata: fields.md,
  };
}

/**
 * Up to `limit` sessions by activity, from just after `after`, out of the activity
 * set of the filter's first field (or of all sessions); the kit checks the other
 * fields. Entries whose session expired or was half-written are dropped from the
 * set as they are met.
 */
export async function recentSessions(
  r: RedisClient,
  layout: KeyLayout,
  match: SessionKeyFilter,
  page: { after: Entry | undefined; limit: number },
): Promise<EngineInfo[]> {
  const [first] = Object.entries(match);
  const set = layout.recentOf(first ? layout.fieldIndex(first[0], first[1]) : layout.allSessions);
  const found: EngineInfo[] = [];
  let batch: Entry[] = [];
  const flush = async () => {
    // Several sessions' info at once: one pipeline each, sent together (on a Cluster each goes to its session's node).
    const infos = await Promise.all(batch.map((entry) => infoOf(r, layout, entry.id)));
    for (const [i, info] of infos.entries()) {
      const entry = batch[i] as Entry;
      if (!info) await dropStaleEntry(r, set, layout.session(entry.id).key, entry.id);
      else if (found.length < page.limit) found.push({ ...info, lastActiveAt: entry.lastActiveAt });
    }
    batch = [];
  };
  for await (const entry of byActivity(r, set, page.after)) {
    batch.push(entry);
    if (found.length + batch.length >= page.limit) await flush();
    if (found.length >= page.limit) break;
  }
  await flush();
  return found;
}
