import { createHash } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { type HistoryStore, InvalidMessageError, type LockOptions, MemoriaError, type SessionKey, type TurnLock, createSessionKey } from "@memoria/core";
import type { UIMessage } from "ai";
import { type StoredTail, readStoredTail } from "./stored-tail.js";
import { checkUIMessage, markPartial, segmentsOf } from "./ui-segments.js";

export interface SaveChatOptions {
  /**
   * The request regenerates an answer (`trigger: "regenerate-message"` in the
   * body `useChat` sends): stored messages the list no longer holds, the answer
   * being replaced, are removed. Otherwise nothing stored is ever removed: a
   * stale list (a second tab) only adds its new messages.
   */
  regenerate?: boolean;
  /** The answer with this id was cut short: it is saved as far as it went, marked partial. */
  partial?: { id: string; reason: "cancelled" | "failed" };
  /** The session's turn lock while saving (stores that have one). */
  lock?: Pick<LockOptions, "ttlMs" | "waitMs">;
}

export interface SaveChatResult {
  /** Messages stored for the first time. */
  added: number;
  /** Stored messages replaced by a newer version of themselves (an answer continued after a tool result or an approval). */
  updated: number;
  /** Stored messages removed (`regenerate`). */
  removed: number;
  /** The LangChain messages written for the added messages, in order: what the turn added to the session. */
  stored: BaseMessage[];
}

/** Checks the list and indexes it by id; an id twice is an error naming both places. */
function indexById(messages: readonly UIMessage[]): Map<string, number> {
  if (!Array.isArray(messages)) throw new MemoriaError("INVALID_ARGUMENT", "saveChat: messages must be an array of UI messages.");
  const ids = new Map<string, number>();
  messages.forEach((message, index) => {
    checkUIMessage(message, index);
    const seen = ids.get(message.id);
    if (seen !== undefined) throw new InvalidMessageError(index, "id", `the id ${JSON.stringify(message.id)} is also the id of message ${seen}`);
    ids.set(message.id, index);
  });
  return ids;
}

/** JSON with keys sorted and undefined left out: two UI messages that are the same print the same. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : inner,
  );
}

/**
 * Compared as UI messages, not as stored records: a message LangChain wrote (an
 * answer with its usage and response metadata) that the client sends back as it
 * was loaded is the same message, and is never rewritten in UI form.
 */
function same(stored: UIMessage, given: UIMessage): boolean {
  return canonical(stored) === canonical(given);
}

/** What the session becomes: stored messages kept, replaced or dropped from the first change on, then the new ones. */
interface Plan {
  /** Index in `tail.messages` from which the stored tail is rewritten; undefined when only appending. */
  from?: number;
  rewrite: BaseMessage[];
  added: BaseMessage[];
  result: SaveChatResult;
}

function plan(tail: StoredTail, messages: readonly UIMessage[], ids: Map<string, number>, options: SaveChatOptions): Plan {
  const segments = (index: number) => {
    const out = segmentsOf(messages[index] as UIMessage, index);
    return options.partial?.id === (messages[index] as UIMessage).id ? markPartial(out, options.partial.reason) : out;
  };
  // Stored messages older than the first the list holds are left alone; so are list entries older than it.
  const first = tail.messages.findIndex((message) => ids.has(message.id));
  const stored = new Set(tail.messages.map((message) => message.id));
  const listFrom = first < 0 ? 0 : (ids.get((tail.messages[first] as UIMessage).id) as number);
  const result: SaveChatResult = { added: 0, updated: 0, removed: 0, stored: [] };
  const superseded = supersededAnswers(tail, messages, ids);
  let from: number | undefined;
  const kept: { index: number; segments: BaseMessage[] }[] = [];
  for (let index = Math.max(first, 0); first >= 0 && index < tail.messages.length; index++) {
    const span = tail.spans[index] as { start: number; end: number };
    const storedSegments = tail.segments.slice(span.start, span.end);
    const at = ids.get((tail.messages[index] as UIMessage).id);
    if (at === undefined) {
      if (options.regenerate || superseded.has(index)) {
        from ??= index;
        result.removed++;
      } else kept.push({ index, segments: storedSegments });
      continue;
    }
    if (same(tail.messages[index] as UIMessage, messages[at] as UIMessage)) kept.push({ index, segments: storedSegments });
    else {
      from ??= index;
      result.updated++;
      kept.push({ index, segments: segments(at) });
    }
  }
  const added: BaseMessage[] = [];
  for (let index = listFrom; index < messages.length; index++) {
    if (stored.has((messages[index] as UIMessage).id)) continue;
    added.push(...segments(index));
    result.added++;
  }
  result.stored = added;
  const rewrite = from === undefined ? [] : kept.filter((entry) => entry.index >= (from as number)).flatMap((entry) => entry.segments);
  return { from, rewrite, added, result };
}

/**
 * A user message gets one answer: when the list answers the newest user message
 * it shares with the session anew (the same request sent again, after a failure
 * the client saw), the stored answers to it that the list lacks are replaced.
 * A stale list that adds a new user message removes nothing.
 */
function supersededAnswers(tail: StoredTail, messages: readonly UIMessage[], ids: Map<string, number>): Set<number> {
  let last = -1;
  for (let index = tail.messages.length - 1; index >= 0 && last < 0; index--) if (ids.has((tail.messages[index] as UIMessage).id)) last = index;
  const shared = tail.messages[last];
  if (shared?.role !== "user") return new Set();
  const next = messages[(ids.get(shared.id) as number) + 1];
  const after = tail.messages.slice(last + 1);
  if (next?.role !== "assistant" || tail.messages.some((message) => message.id === next.id) || after.some((message) => message.role !== "assistant")) return new Set();
  return new Set(after.map((_, offset) => last + 1 + offset));
}

/** The turn id of an append: the new messages' ids, so a retried save stores them once even where the store has no lock. */
function turnIdOf(added: readonly BaseMessage[]): string {
  return `ui:${createHash("sha256").update(added.map((message) => message.id ?? "").join("\n")).digest("base64url").slice(0, 32)}`;
}

/**
 * Saves a chat's UI messages (the whole list `onFinish` hands over, or any list
 * ending in the new ones): stores exactly the messages the session does not hold
 * yet, once, however often the same request is retried; replaces a stored message
 * the list holds a newer version of; on `regenerate`, removes what the list
 * dropped. The session is read from its end only as far as the list reaches back,
 * under the session's turn lock where the store has one, and every write is
 * fenced by it.
 */
export async function saveChat(store: HistoryStore, key: SessionKey | Record<string, string>, messages: readonly UIMessage[], options: SaveChatOptions = {}): Promise<SaveChatResult> {
  const sessionKey = createSessionKey(key);
  const ids = indexById(messages);
  const lock: TurnLock | undefined = store.lock ? await store.lock(sessionKey, options.lock) : undefined;
  try {
    const reach = Math.min(messages.length, 4) * 4 + 8;
    const tail = await readStoredTail(store, sessionKey, reach, ({ messages: stored }) => stored.some((message) => ids.has(message.id)));
    const { from, rewrite, added, result } = plan(tail, messages, ids, options);
    if (from === undefined) {
      if (added.length > 0) {
        const saved = await store.append(sessionKey, added, { turnId: turnIdOf(added), lock, release: lock !== undefined });
        if (saved.released) lock?.markReleased?.();
        if (!saved.appended) Object.assign(result, { added: 0, stored: [] });
      }
      return result;
    }
    if (!store.replaceTail) throw new MemoriaError("INVALID_ARGUMENT", `saveChat: the ${store.name} store cannot replace messages (it has no replaceTail), so an answer cannot be updated or regenerated in place.`);
    const offset = tail.offset ?? (await store.count(sessionKey)) - tail.segments.length;
    const start = offset + (tail.spans[from] as { start: number }).start;
    await store.replaceTail(sessionKey, { from: start, count: offset + tail.segments.length, messages: [...rewrite, ...added] }, { lock });
    return result;
  } finally {
    await lock?.release();
  }
}
