import type { Stats } from "node:fs";
import { open } from "node:fs/promises";
import {
  type InfoPage,
  type JsonValue,
  type ListOptions,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  createSessionKey,
  encodeSessionKey,
} from "@memoria/core";
import { type CheckedPatch, recentPage, sessionInfo } from "@memoria/core/store-kit";
import { type FoundSession, readHeader } from "./session-directory.js";
import type { Paths } from "./session-ledger.js";

/**
 * Where a session's title and metadata live: an entry of its state file that no
 * state name can be (state names start with a letter).
 */
export const INFO_ENTRY = "@info";

type Stored = { ti?: string; md?: string };

/** The state file's info entry after `patch`. */
export function patchedInfo(state: Record<string, JsonValue>, patch: CheckedPatch): Record<string, JsonValue> {
  const before = (state[INFO_ENTRY] as Stored | undefined) ?? {};
  const next: Stored = {};
  const title = patch.title === undefined ? before.ti : patch.title;
  const metadata = patch.metadata === undefined ? before.md : patch.metadata;
  if (title !== null && title !== undefined) next.ti = title;
  if (metadata !== null && metadata !== undefined) next.md = metadata;
  const out = { ...state };
  if (next.ti === undefined && next.md === undefined) delete out[INFO_ENTRY];
  else out[INFO_ENTRY] = next;
  return out;
}

/** What the file store lends the info calls. */
export interface FileInfoContext {
  paths(key: SessionKey): Paths;
  liveStat(file: string): Stats | undefined;
  count(p: Paths, stats: Stats): Promise<number>;
  readState(p: Paths): Promise<Record<string, JsonValue>>;
  allSessions(): Promise<FoundSession[]>;
}

async function infoOf(ctx: FileInfoContext, found: FoundSession, p: Paths, stats: Stats): Promise<SessionInfo> {
  const [count, state] = await Promise.all([ctx.count(p, stats), ctx.readState(p)]);
  const stored = (state[INFO_ENTRY] as Stored | undefined) ?? {};
  return sessionInfo(found.key, { createdAt: found.createdAt, lastActiveAt: found.lastActiveAt, messageCount: count, title: stored.ti, metadata: stored.md });
}

/**
 * A session's info: its creation time from its file's header, its last activity
 * from the file's modification time (a state write renews the session's TTL, so
 * on this store it counts as activity too).
 */
export async function fileInfo(ctx: FileInfoContext, key: SessionKey): Promise<SessionInfo | undefined> {
  const sessionKey = createSessionKey(key);
  const p = ctx.paths(sessionKey);
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
  const found = { key: sessionKey, id: encodeSessionKey(sessionKey), createdAt: created ?? stats.birthtimeMs, lastActiveAt: Math.floor(stats.mtimeMs) };
  return infoOf(ctx, found, p, stats);
}

/**
 * Newest first. The file store has no index: it reads every session file's header
 * and metadata, as `list` does, and sorts. Fine for the thousands of sessions a
 * folder of files is for; use SQLite past that.
 */
export async function fileRecent(ctx: FileInfoContext, filter: SessionKeyFilter | undefined, options: ListOptions | undefined): Promise<InfoPage> {
  const { page, cursor } = recentPage(await ctx.allSessions(), (found) => found.key, filter, options);
  const sessions: SessionInfo[] = [];
  for (const found of page) {
    const p = ctx.paths(found.key);
    const stats = ctx.liveStat(p.file);
    if (stats) sessions.push(await infoOf(ctx, found, p, stats));
  }
  return cursor ? { sessions, cursor } : { sessions };
}
