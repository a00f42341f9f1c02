import { type FencedWriteOptions, type JsonValue, MemoriaError, type SessionKey, namedValues, stateName, stateValue } from "@memoria/core";
import type { SealingContext } from "./encrypted-info.js";
import { openState, sealState, stateDataKeyId } from "./sealed-records.js";

/* A session's state values under encryption: each sealed with the session's data key, bound to its name. */

/** State names memoria keeps for its own records (a session's data key, its sealed info). */
const RESERVED_STATE = /^memoria\./;

export async function sealedState(ctx: SealingContext, key: SessionKey, name: string): Promise<JsonValue | undefined> {
  const s = ctx.stored(key);
  const value = await ctx.inner.getState(s.stored, appStateName(name));
  if (value === undefined) return undefined;
  const { dataKeyId, sealed } = stateDataKeyId(s.key, value);
  return openState(s.key, s.id, name, sealed, await ctx.keys.forRead(s.key, s.stored, dataKeyId));
}

/** Every state value the app set, opened; memoria's own records stay inside. */
export async function allSealedState(ctx: SealingContext, key: SessionKey): Promise<Record<string, JsonValue>> {
  const s = ctx.stored(key);
  const stored = await ctx.inner.getAllState!(s.stored);
  const names = Object.keys(stored).filter((name) => !RESERVED_STATE.test(name));
  const opened = await Promise.all(
    names.map(async (name) => {
      const { dataKeyId, sealed } = stateDataKeyId(s.key, stored[name] as JsonValue);
      return [name, openState(s.key, s.id, name, sealed, await ctx.keys.forRead(s.key, s.stored, dataKeyId))] as const;
    }),
  );
  return namedValues(opened);
}

export async function setSealedState(ctx: SealingContext, key: SessionKey, name: string, value: JsonValue, options?: FencedWriteOptions): Promise<void> {
  const s = ctx.stored(key);
  appStateName(name);
  const checked = stateValue(value);
  // Under a lock (the caller's, or one taken here), so the data key it seals with is
  // the session's own even if another process erased and restarted the session.
  await ctx.underLock(s.id, s.stored, options?.lock, async (lock) => {
    const { dataKey } = await ctx.keys.forWrite(s.key, s.stored, lock);
    await ctx.inner.setState(s.stored, name, sealState(dataKey, s.id, name, checked), { lock });
  });
}

/** A state name the app may use: not one of memoria's own. */
function appStateName(name: string): string {
  if (RESERVED_STATE.test(stateName(name))) {
    throw new MemoriaError("INVALID_ARGUMENT", `State names starting with "memoria." are kept for memoria's own use; got ${JSON.stringify(name)}.`);
  }
  return name;
}
