import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore, SessionKey } from "@memoria/core";
import type { UIMessage } from "ai";
import { assembleUIMessages, segmentRecord } from "./ui-assembly.js";

/** The newest stored UI messages, with where each one's segments sit in the session. */
export interface StoredTail {
  messages: UIMessage[];
  /** Each message's segments, as positions in `segments`. */
  spans: { start: number; end: number }[];
  segments: BaseMessage[];
  partial: Set<string>;
  /** The position of `segments[0]` in the session, when it was needed (always known once the whole session was read). */
  offset: number | undefined;
  /** True when the tail is the whole session. */
  whole: boolean;
}

/**
 * Reads the session from its end in growing windows until `enough` says the UI
 * messages read suffice, or the whole session is read: the cost of a turn grows
 * with what it touches, not with the chat. An infinite first window reads it all.
 */
export async function readStoredTail(store: HistoryStore, key: SessionKey, firstWindow: number, enough: (tail: StoredTail) => boolean): Promise<StoredTail> {
  let window = Math.max(8, firstWindow);
  for (;;) {
    const segments = await store.read(key, Number.isFinite(window) ? { last: window } : undefined);
    const whole = segments.length < window;
    // LangChain's messages without an id are named by position: only then is the window's offset worth a count.
    const offset = whole
      ? 0
      : segments.some((segment) => segment.id === undefined && !segmentRecord(segment))
        ? (await store.count(key)) - segments.length
        : undefined;
    // A window that starts inside a UI message leaves that message out; spans are positions in the window.
    const tail: StoredTail = { ...assembleUIMessages(segments, offset ?? 0), segments, whole, offset };
    if (whole || (tail.messages.length > 0 && enough(tail))) return tail;
    window *= 4;
  }
}

/** Where a whole `loadChat` keeps what it read, for `saveChat({ loaded })`. */
export const SNAPSHOT = Symbol("memoria.ai-sdk.snapshot");

/**
 * How many stored messages, from the end, a load keeps for the save: more than
 * the usual save compares (see saveChat's reach). Keeping the whole session would
 * hold every stored message alive across the model's answer, which a long chat's
 * collections then copy again and again; a save that reaches further reads.
 */
export const SNAPSHOT_REACH = 64;

/** The session as a whole load read it, if `value` is such a load. */
export function snapshotOf(value: unknown): StoredTail | undefined {
  return (value as { [SNAPSHOT]?: StoredTail } | undefined)?.[SNAPSHOT];
}

/** The last `reach` segments of a tail read earlier, as a shorter tail: what a fresh windowed read would give. */
export function windowOf(tail: StoredTail, reach: number): StoredTail {
  const cut = Math.max(0, tail.segments.length - reach);
  if (cut === 0) return tail;
  // Spans are in order: the kept messages are the last few, found from the end.
  let first = tail.spans.length;
  while (first > 0 && (tail.spans[first - 1] as { start: number }).start >= cut) first--;
  return {
    messages: tail.messages.slice(first),
    spans: tail.spans.slice(first).map((span) => ({ start: span.start - cut, end: span.end - cut })),
    segments: tail.segments.slice(cut),
    partial: tail.partial,
    offset: tail.offset === undefined ? undefined : tail.offset + cut,
    whole: false,
  };
}
