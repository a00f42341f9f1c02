import type { Stats } from "node:fs";
import { open } from "node:fs/promises";
import type { JsonValue, SessionKeyFilter } from "@memoria/core";
import { type CheckedPatch, type EngineInfo, type EngineSession, keyMatches } from "@memoria/core/store-kit";
import { type FoundSession, readHeader } from "./session-directory.js";
import type { Paths } from "./session-ledger.js";

/**
 * Where a session's title and metadata live: an entry of its state file that no
 * state name can be (state names start with a letter). A creation time set by
 * `setInfo` is kept there too (`ca`), over the file header's; a last-activity time
 * set by `setInfo` is the session file's modification time, as activity always is.
 */
export const INFO_ENTRY = "@info";

type Stored = { ti?: string; md?: string; ca?: number };

/** The state file's info entry after `patch`. */
export function patchedInfo(state: Record<string, JsonValue>, patch: CheckedPatch): Record<string, JsonValue> {
  const before = (state[INFO_ENTRY] as Stored | undefined) ?? {};
  const next: Stored = {};
  const title = patch.title === undefined ? before.ti : patch.title;
  const metadata = patch.metadata === undefined ? before.md : patch.metadata;
  if (title !== null && title !== undefined) next.ti = title;
  if (metadata !== null && metadata !== undefined) next.md = metadata;
  const createdAt = patch.createdAt ?? before.ca;
  if (createdAt !== undefined) next.ca = createdAt;
  const out = { ...state };
  if (Object.keys(next).length === 0) delete out[INFO_ENTRY];
  else out[INFO_ENTRY] = next;
  return out;
}

/** What the file store lends the info calls. */
export interface FileInfoContext {
  pathsOf(id: string): Paths;
  liveStat(file: string): Stats | undefined;
  count(p: Paths, stats: Stats): Promise<number>;
  readState(p: Paths): Promise<Record<string, JsonValue>>;
  allSessions(): Promise<FoundSession[]>;
}

async function infoOf(ctx: FileInfoContext, found: FoundSession, p: Paths, stats: Stats): Promise<EngineInfo> {
  const [count, state] = await Promise.all([ctx.count(p, stats), ctx.readState(p)]);
  const stored = (state[INFO_ENTRY] as Stored | undefined) ?? {};
  return {
    id: found.id,
    key: found.key,
    createdAt: stored.ca ?? found.createdAt,
    lastActiveAt: found.lastActiveAt,
    messageCount: count,
    title: stored.ti,
    metadata: stored.md,
  };
}

/**
 * A session's info: its creation time from its file's header, its last activity
 * from the file's modification time (a state write renews the session's TTL, so
 * on this store it counts as activity too).
 */
export async function fileInfo(ctx: FileInfoContext, { key, id }: EngineSession): Promise<EngineInfo | undefined> {
  const p = ctx.pathsOf(id);
  const stats = ctx.liveStat(p.file);
  if (!stats) return undefined;
  const handle = await open(p.file, "r").catch(() => undefined);
  if (!handle) return undefined;
  let created: number | undefined;
  try {
    created = (await readHeader(handle, stats.size)).created;
  } finally {
    await handle.close();
  }
  return infoOf(ctx, { key, id, createdAt: created ?? stats.birthtimeMs, lastActiveAt: Math.floor(stats.mtimeMs) }, p, stats);
}

/**
 * Newest first, strictly after `after` in (lastActiveAt desc, id) order. The file
 * store has no index: it reads every session file's header, as `list` does, and
 * sorts. Fine for the thousands of sessions a folder of files is for; use SQLite past that.
 */
export async function fileRecent(
  ctx: FileInfoContext,
  match: SessionKeyFilter,
  page: { after: { lastActiveAt: number; id: string } | undefined; limit: number },
): Promise<EngineInfo[]> {
  const { after } = page;
  const newer = (found: FoundSession) =>
    after !== undefined && (found.lastActiveAt > after.lastActiveAt || (found.lastActiveAt === after.lastActiveAt && found.id <= after.id));
  const found = (await ctx.allSessions())
    .filter((session) => keyMatches(session.key, match) && !newer(session))
    .sort((a, b) => b.lastActiveAt - a.lastActiveAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const infos: EngineInfo[] = [];
  for (const session of found) {
    if (infos.length === page.limit) break;
    const p = ctx.pathsOf(session.id);
    const stats = ctx.liveStat(p.file);
    if (stats) infos.push(await infoOf(ctx, session, p, stats));
  }
  return infos;
}
