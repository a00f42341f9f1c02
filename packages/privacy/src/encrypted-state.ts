import { type FencedWriteOptions, IntegrityError, type JsonValue, MemoriaError, type SessionKey } from "@memoria/core";
import { namedValues, stateName } from "@memoria/core/store-kit";
import type { SealingContext } from "./encrypted-info.js";
import { anchor, anchored, parseVersion, stateItem, versionText } from "./freshness-anchor.js";
import { openState, sealState, stateDataKeyId } from "./sealed-records.js";

/* A session's state values under encryption: each sealed with the session's data key, bound to its name. */

/** State names memoria keeps for its own records (a session's data key, its sealed info). */
const RESERVED_STATE = /^memoria\./;

export async function sealedState(ctx: SealingContext, key: SessionKey, name: string): Promise<JsonValue | undefined> {
  const s = ctx.stored(key);
  const [value, head] = await Promise.all([ctx.inner.getState(s.stored, appStateName(name)), anchored(ctx.anchor, s.id, stateItem(name))]);
  return value === undefined ? undefined : openValue(ctx, s, name, value, head);
}

/** Every state value the app set, opened; memoria's own records stay inside. */
export async function allSealedState(ctx: SealingContext, key: SessionKey): Promise<Record<string, JsonValue>> {
  const s = ctx.stored(key);
  const stored = await ctx.inner.getAllState(s.stored);
  const names = Object.keys(stored).filter((name) => !RESERVED_STATE.test(name));
  const opened = await Promise.all(
    names.map(async (name) => [name, await openValue(ctx, s, name, stored[name] as JsonValue, await anchored(ctx.anchor, s.id, stateItem(name)))] as const),
  );
  return namedValues(opened);
}

/** Opens a stored state value; with an anchor, one older than the version it holds is refused. */
async function openValue(ctx: SealingContext, s: ReturnType<SealingContext["stored"]>, name: string, value: JsonValue, anchorHead: string | undefined) {
  const envelope = stateDataKeyId(s.key, value);
  const opened = openState(s.key, s.id, name, envelope, await ctx.keys.forRead(s.key, s.stored, envelope.dataKeyId));
  const newest = parseVersion(anchorHead);
  if (newest?.dataKeyId === envelope.dataKeyId && (envelope.version ?? 0) < newest.version) {
    throw new IntegrityError(
      s.key,
      "rolled-back",
      `state "${name}" is version ${envelope.version ?? 0}, older than the version ${newest.version} the freshness anchor holds`,
    );
  }
  return opened;
}

/**
 * Seals and stores state values of one session together, through the inner store's
 * `setStates` (one step where it writes several so).
 */
export async function setSealedStates(ctx: SealingContext, key: SessionKey, entries: [string, JsonValue][], options?: FencedWriteOptions): Promise<void> {
  const s = ctx.stored(key);
  for (const [name] of entries) appStateName(name);
  if (entries.length === 0) return;
  // Under a lock (the caller's, or one taken here), so the data key it seals with is
  // the session's own even if another process erased and restarted the session, and
  // (with an anchor) versions of one value never go back.
  await ctx.underLock(s.id, s.stored, options?.lock, async (lock) => {
    const [{ dataKey }, ...heads] = await Promise.all([
      ctx.keys.forWrite(s.key, s.stored, lock),
      ...entries.map(([name]) => anchored(ctx.anchor, s.id, stateItem(name))),
    ]);
    const versions = heads.map((head) => {
      const last = parseVersion(head);
      return ctx.anchor ? (last?.dataKeyId === dataKey.id ? last.version + 1 : 1) : undefined;
    });
    const sealed = entries.map(([name, value], i): [string, JsonValue] => [name, sealState(dataKey, s.id, name, value, versions[i])]);
    await ctx.inner.setStates(s.stored, namedValues(sealed), { lock });
    for (const [i, [name]] of entries.entries()) {
      const version = versions[i];
      if (version !== undefined) await anchor(ctx.anchor, s.id, stateItem(name), versionText({ dataKeyId: dataKey.id, version }));
    }
  });
}

/** A state name the app may use: not one of memoria's own. */
function appStateName(name: string): string {
  if (RESERVED_STATE.test(stateName(name))) {
    throw new MemoriaError("INVALID_ARGUMENT", `State names starting with "memoria." are kept for memoria's own use; got ${JSON.stringify(name)}.`);
  }
  return name;
}
