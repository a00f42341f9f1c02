import type { BaseMessage } from "@langchain/core/messages";
import type {
  AppendOptions,
  AppendResult,
  FencedWriteOptions,
  LockOptions,
  OpenTurn,
  ReadOptions,
  SessionKey,
  TailReplacement,
  TurnLock,
  TurnOptions,
} from "@memoria/core";
import { checkTail, encodeMessages, toStoredText, trimCount } from "@memoria/core/store-kit";
import type { Tail } from "./data-keys.js";
import type { SealingContext } from "./encrypted-info.js";
import { MESSAGES_ITEM, anchor, anchored, headText, parseHead } from "./freshness-anchor.js";
import type { OpenedRecords } from "./opened-records.js";
import { checkHead, checkRun, headOf } from "./record-chain.js";
import { type SealedMessage, linkOf, openMessages, parseSealedMessage, sealWrite } from "./sealed-records.js";

/* A session's messages under encryption: sealed writes that chain, and reads that check the chain and the head. */

const NO_TAIL: Tail = { position: -1, edit: 0, link: "" };
const tailOf = (record: SealedMessage): Tail => ({ position: record.position, edit: record.edit, link: linkOf(record.envelope) });

export async function readSealed(ctx: SealingContext, opened: OpenedRecords, key: SessionKey, options?: ReadOptions): Promise<BaseMessage[]> {
  const s = ctx.stored(key);
  const at = ctx.keys.tick();
  const windowed = options?.last !== 0;
  const [stored, anchorHead] = await Promise.all([
    ctx.inner.read(s.stored, { ...options, sealed: true }),
    windowed ? anchored(ctx.anchor, s.id, MESSAGES_ITEM) : undefined,
  ]);
  return openRead(ctx, opened, s, stored, anchorHead, at, windowed);
}

/** Takes the inner store's turn lock, noting when it was taken. */
export async function lockSealed(ctx: SealingContext, key: SessionKey, options?: LockOptions): Promise<TurnLock> {
  // Called on the inner store, not taken off it: a wrapper's lock is a method of its class.
  return ctx.keys.stampLock(await ctx.inner.lock(ctx.stored(key).stored, options));
}

/**
 * Opens the inner store's turn, its history read sealed and opened and checked as
 * `readSealed` does (the anchor, if any, is asked once the lock is held); its save
 * seals as `appendSealed` does and stores through the inner turn, so the lock can
 * go back with the write.
 */
export async function openSealedTurn(ctx: SealingContext, opened: OpenedRecords, key: SessionKey, options: TurnOptions = {}): Promise<OpenTurn> {
  const s = ctx.stored(key);
  const { read } = options;
  const inner = await ctx.inner.openTurn(s.stored, read ? { ...options, read: { ...read, sealed: true } } : options);
  const lock = ctx.keys.stampLock(inner.lock);
  let history: BaseMessage[] | undefined;
  if (read) {
    // Read in the step that took the lock: seen after it was taken, so the turn's write
    // finds the data key and the newest record known (no second fetch under the lock).
    const at = ctx.keys.tick();
    try {
      const windowed = read.last !== 0;
      history = await openRead(ctx, opened, s, inner.history ?? [], windowed ? await anchored(ctx.anchor, s.id, MESSAGES_ITEM) : undefined, at, windowed);
    } catch (error) {
      await inner.release();
      throw error;
    }
  }
  const save: OpenTurn["save"] = (messages, saveOptions) =>
    appendSealed(ctx, opened, key, messages, { lock, turnId: saveOptions?.turnId }, (sealed) => inner.save(sealed, saveOptions));
  return { lock, history, save, release: () => inner.release() };
}

/** Opens a read's sealed records and checks them: an unbroken run, no older than any head seen or anchored. */
async function openRead(
  ctx: SealingContext,
  opened: OpenedRecords,
  s: { key: SessionKey; stored: SessionKey; id: string },
  stored: readonly BaseMessage[],
  anchorHead: string | undefined,
  at: number,
  windowed: boolean,
): Promise<BaseMessage[]> {
  if (stored.length === 0) {
    // Every record gone reads as a session trimmed or erased: there is no newest record to check.
    if (windowed) ctx.keys.saw(s.id, at, undefined, NO_TAIL);
    return [];
  }
  const records = stored.map((message) => parseSealedMessage(s.key, message));
  const newest = records[records.length - 1] as SealedMessage;
  const dataKey = await ctx.keys.forRead(s.key, s.stored, newest.dataKeyId);
  const messages = openMessages(s.key, s.id, records, { id: newest.dataKeyId, key: dataKey }, opened);
  // Marks cached with the data key are never too strict: they only grow, and a
  // session erased and begun again has another data key.
  checkRun(s.key, records, ctx.keys.marksOf(s.id, newest.dataKeyId));
  const head = headOf(newest);
  checkHead(s.key, head, ctx.keys.headBefore(s.id, at), "this process saw");
  checkHead(s.key, head, parseHead(anchorHead), "the freshness anchor holds");
  if (windowed) ctx.keys.saw(s.id, at, newest.dataKeyId, tailOf(newest));
  ctx.keys.reached(s.id, head);
  return messages;
}

export async function appendSealed(
  ctx: SealingContext,
  opened: OpenedRecords,
  key: SessionKey,
  messages: readonly BaseMessage[],
  options?: AppendOptions,
  /** How the sealed records are stored under the lock: a turn's save; without it, the inner store's fenced append. */
  store?: (sealed: BaseMessage[], lock: TurnLock) => Promise<AppendResult>,
): Promise<AppendResult> {
  const s = ctx.stored(key);
  const encoded = encodeMessages(messages); // refuses what cannot be stored before anything is written
  const payloads = encoded.map((message, index) => toStoredText(message, index));
  if (payloads.length === 0) return ctx.inner.append(s.stored, [], options);
  return ctx.underLock(s.id, s.stored, options?.lock, async (lock) => {
    const newest = async () => {
      const [tail] = await ctx.inner.read(s.stored, { last: 1, sealed: true });
      return tail ? tailOf(parseSealedMessage(s.key, tail)) : NO_TAIL;
    };
    const { dataKey, start } = await ctx.keys.forWrite(s.key, s.stored, lock, newest);
    const sealed = sealWrite(dataKey, s.id, start, payloads);
    let result: AppendResult;
    try {
      result = await (store ? store(sealed, lock) : ctx.inner.append(s.stored, sealed, { ...options, lock }));
    } catch (error) {
      ctx.keys.forget(s.id);
      throw error;
    }
    if (!result.appended) {
      ctx.keys.appended(s.id, undefined); // a retried turn: where the session ends is not known here
      return result;
    }
    const last = sealed[sealed.length - 1]!.content as string;
    const position = start.start + sealed.length - 1;
    ctx.keys.appended(s.id, { position, edit: start.edit, link: linkOf(last) });
    // The next read will find these at the end of its window: no need to open them again.
    for (let i = 0; i < sealed.length; i++) opened.set(s.id, start.start + i, sealed[i]!.content as string, encoded[i]!, payloads[i]!.length);
    const head = { dataKeyId: dataKey.id, edit: start.edit, position };
    ctx.keys.reached(s.id, head);
    await anchor(ctx.anchor, s.id, MESSAGES_ITEM, headText(head));
    return result;
  });
}

/**
 * An edit: the new messages are sealed at the positions of those they replace, with
 * the session's edit count one higher, and the newest record kept is sealed again
 * with them (so the session's newest record always carries the latest edit count,
 * even when the edit only removed messages). The data key record then notes where
 * the edit started: a replaced record written back is refused (`rolled-back`).
 */
export async function replaceSealedTail(ctx: SealingContext, opened: OpenedRecords, key: SessionKey, tail: TailReplacement, options?: FencedWriteOptions) {
  const s = ctx.stored(key);
  checkTail(tail);
  const replaced = tail.count - tail.from;
  const messages = encodeMessages(tail.messages);
  await ctx.underLock(s.id, s.stored, options?.lock, async (lock) => {
    // The replaced records, the one before them (kept, and sealed again) and the one before that (its link).
    const window = (await ctx.inner.read(s.stored, { last: replaced + 2, sealed: true })).map((message) => parseSealedMessage(s.key, message));
    const { dataKey } = await ctx.keys.forWrite(s.key, s.stored, lock);
    const kept = tail.from > 0 ? window[window.length - replaced - 1] : undefined;
    const payloads = messages.map((message, index) => toStoredText(message, index));
    if (kept) {
      const [message] = openMessages(s.key, s.id, [kept], dataKey, opened);
      payloads.unshift(toStoredText(encodeMessages([message!])[0]!, 0));
    }
    const before = window[window.length - replaced - 2];
    const newest = window[window.length - 1];
    const marks = dataKey.marks ?? {};
    const edit = Math.max(newest?.edit ?? 0, marks.edit?.count ?? 0, marks.floor?.edit ?? 0) + 1;
    const start = (kept ?? window[window.length - replaced])?.position ?? marks.floor?.next ?? 0;
    const link = kept?.link ?? (before ? linkOf(before.envelope) : "");
    const sealed = sealWrite(dataKey, s.id, { start, edit, link }, payloads);
    opened.forget(s.id);
    try {
      await ctx.inner.replaceTail(s.stored, { from: kept ? tail.from - 1 : tail.from, count: tail.count, messages: sealed }, { lock });
      await ctx.keys.mark(s.key, s.stored, lock, (current) => ({ ...current, edit: { count: edit, from: start } }));
    } finally {
      ctx.keys.forget(s.id);
    }
    if (sealed.length > 0) {
      const head = { dataKeyId: dataKey.id, edit, position: start + sealed.length - 1 };
      ctx.keys.reached(s.id, head);
      await anchor(ctx.anchor, s.id, MESSAGES_ITEM, headText(head));
    }
  });
}

/**
 * Removes the oldest records. One that empties the session first notes, sealed in
 * the data key record, where positions go on, so they never start over under one
 * data key (a head seen earlier would take that for records removed).
 */
export async function trimSealed(ctx: SealingContext, key: SessionKey, options: { oldest: number }): Promise<number> {
  const s = ctx.stored(key);
  const oldest = trimCount(options);
  if (!ctx.inner.capabilities.trim) return ctx.inner.trim(s.stored, options); // rejects, before anything is marked
  const count = oldest === 0 ? 0 : await ctx.inner.count(s.stored);
  if (count > 0 && oldest >= count) {
    const [newest] = await ctx.inner.read(s.stored, { last: 1, sealed: true });
    if (newest) {
      const record = parseSealedMessage(s.key, newest);
      await ctx.keys.mark(s.key, s.stored, undefined, (marks) => ({ ...marks, floor: { next: record.position + 1, edit: record.edit } }));
    }
  }
  return ctx.inner.trim(s.stored, options);
}
