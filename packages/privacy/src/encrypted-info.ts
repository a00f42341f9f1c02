import {
  type FencedWriteOptions,
  type HistoryStore,
  IntegrityError,
  type InfoPage,
  type InfoPatch,
  type JsonValue,
  type ListOptions,
  type SessionInfo,
  type SessionKey,
  type SessionKeyFilter,
  type TurnLock,
  encodeSessionKey,
} from "@memoria/core";
import { checkInfoPatch, toJsonValue } from "@memoria/core/store-kit";
import type { DataKeys } from "./data-keys.js";
import type { FreshnessAnchor } from "./freshness-anchor.js";
import { openState, sealState, stateDataKeyId } from "./sealed-records.js";

/** The name a session's sealed title and metadata are bound to (as a state value's name is). */
const INFO_NAME = "memoria.info";
/** The one metadata field the inner store sees: the sealed title and metadata together. */
const SEALED_FIELD = "memoria.sealed";

type Plain = { title?: string; metadata?: { [field: string]: JsonValue } };

/** What the encrypted store lends its info and state calls (encrypted-info.ts, encrypted-state.ts). */
export interface SealingContext {
  inner: HistoryStore;
  keys: DataKeys;
  anchor?: FreshnessAnchor;
  stored(key: SessionKey): { key: SessionKey; stored: SessionKey; id: string };
  rawKey(stored: SessionKey): Promise<SessionKey>;
  underLock<T>(id: string, stored: SessionKey, lock: TurnLock | undefined, write: (lock: TurnLock) => Promise<T>): Promise<T>;
}

/** The inner store's info with the title and metadata opened; a title or metadata stored in the clear is an `IntegrityError`. */
async function openInfo(ctx: SealingContext, key: SessionKey, stored: SessionKey, info: SessionInfo): Promise<SessionInfo & Plain> {
  const out: SessionInfo = { key, createdAt: info.createdAt, lastActiveAt: info.lastActiveAt, messageCount: info.messageCount };
  const sealed = info.metadata?.[SEALED_FIELD];
  if (info.title !== undefined || (info.metadata !== undefined && (sealed === undefined || Object.keys(info.metadata).length !== 1))) {
    throw new IntegrityError(key, "not-sealed", "the session's title or metadata is not sealed (written without encryption, or replaced)");
  }
  if (sealed === undefined) return out;
  const envelope = stateDataKeyId(key, sealed);
  const dataKey = await ctx.keys.forRead(key, stored, envelope.dataKeyId);
  const plain = openState(key, encodeSessionKey(stored), INFO_NAME, envelope, dataKey) as Plain;
  if (plain.title !== undefined) out.title = plain.title;
  if (plain.metadata !== undefined) out.metadata = plain.metadata;
  return out;
}

export async function sealedInfo(ctx: SealingContext, key: SessionKey): Promise<SessionInfo | undefined> {
  const s = ctx.stored(key);
  const info = await ctx.inner.info(s.stored);
  return info && openInfo(ctx, s.key, s.stored, info);
}

/**
 * Title and metadata are sealed together as one value, so a patch of one of them
 * is a read, change and write of both: under the session's lock (the caller's, or
 * one taken here), so two patches never lose each other's change.
 */
export async function setSealedInfo(ctx: SealingContext, key: SessionKey, patch: InfoPatch, options?: FencedWriteOptions): Promise<void> {
  const s = ctx.stored(key);
  const checked = checkInfoPatch(patch);
  await ctx.underLock(s.id, s.stored, options?.lock, async (lock) => {
    const current = await ctx.inner.info(s.stored);
    const opened: Plain = current ? await openInfo(ctx, s.key, s.stored, current) : {};
    const next: Plain = {
      title: checked.title === undefined ? opened.title : (checked.title ?? undefined),
      metadata: checked.metadata === undefined ? opened.metadata : checked.metadata === null ? undefined : JSON.parse(checked.metadata),
    };
    const empty = next.title === undefined && next.metadata === undefined;
    const { dataKey } = await ctx.keys.forWrite(s.key, s.stored, lock);
    const metadata = empty ? null : { [SEALED_FIELD]: sealState(dataKey, s.id, INFO_NAME, toJsonValue(next)) };
    // The times are stored in clear, as every store keeps them.
    await ctx.inner.setInfo(s.stored, { title: null, metadata, createdAt: checked.createdAt, lastActiveAt: checked.lastActiveAt }, { lock });
  });
}

/** `filter` is as stored (hashed where ids are). */
export async function recentSealed(ctx: SealingContext, filter: SessionKeyFilter, options?: ListOptions): Promise<InfoPage> {
  const page = await ctx.inner.recent(filter, options);
  const sessions = await Promise.all(page.sessions.map(async (info) => openInfo(ctx, await ctx.rawKey(info.key), info.key, info)));
  return { ...page, sessions };
}
