import { createHash } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { EditConflictError, type HistoryStore, InvalidMessageError, MemoriaError, type SessionKey, createSessionKey } from "@memoria/core";
import type { UIMessage } from "ai";
import { type StoredTail, readStoredTail, snapshotOf, windowOf } from "./stored-tail.js";
import { checkUIMessage, markPartial, segmentsOf } from "./ui-segments.js";

export interface SaveChatOptions {
  /**
   * The request regenerates an answer (`trigger: "regenerate-message"` in the
   * body `useChat` sends): stored messages the list no longer holds, the answer
   * being replaced, are removed. Otherwise nothing stored is ever removed: a
   * stale list (a second tab) only adds its new messages.
   */
  regenerate?: boolean;
  /**
   * The body `useChat` sent, for what the list means: a regenerate (`trigger:
   * "regenerate-message"`) or an edit of an earlier message (`sendMessage({ messageId })`,
   * which sends `messageId`) makes the list what the user now sees, so stored
   * messages it dropped are removed, as with `regenerate`. A plain send removes nothing.
   */
  request?: { trigger?: unknown; messageId?: unknown };
  /** The answer with this id was cut short: it is saved as far as it went, marked partial. */
  partial?: { id: string; reason: "cancelled" | "failed" };
  /**
   * The chat as `loadChat` (whole, not a page) loaded it for this request: the
   * save plans from it instead of reading the session again. Safe if the session
   * changed since: a stale plan's write is refused (a repeated message, a changed
   * length) and the save reads and plans again.
   */
  loaded?: unknown;
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

/**
 * Indexes the list by id; an id twice is an error naming both places. Each
 * message's shape is checked in full where it is compared or stored: the
 * messages already stored and unchanged cost only their id here.
 */
function indexById(messages: readonly UIMessage[]): Map<string, number> {
  if (!Array.isArray(messages)) throw new MemoriaError("INVALID_ARGUMENT", "saveChat: messages must be an array of UI messages.");
  const ids = new Map<string, number>();
  messages.forEach((message, index) => {
    if (typeof message?.id !== "string") checkUIMessage(message, index);
    const seen = ids.get(message.id);
    if (seen !== undefined) throw new InvalidMessageError(index, "id", `the id ${JSON.stringify(message.id)} is also the id of message ${seen}`);
    ids.set(message.id, index);
  });
  return ids;
}

type Json = Record<string, unknown>;

/** A value JSON.stringify leaves out of an object. */
const omitted = (value: unknown) => value === undefined || typeof value === "function" || typeof value === "symbol";

/**
 * True when the two print as the same JSON, keys in any order, without printing
 * them: a message passed back as it was loaded (the same object) costs nothing,
 * and one sent back by a client costs one walk. Dates and other values with a
 * toJSON are compared as JSON. Messages are compared as UI messages, not as stored
 * records: a message LangChain wrote (an answer with its usage and response
 * metadata) that the client sends back as it was loaded is the same message, and
 * is never rewritten in UI form.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || "toJSON" in a || "toJSON" in b)
    return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameJson(omitted(item) ? null : item, omitted(b[index]) ? null : b[index]));
  }
  let keys = 0;
  for (const key of Object.keys(a)) {
    if (omitted((a as Json)[key])) continue;
    keys++;
    if (!sameJson((a as Json)[key], (b as Json)[key])) return false;
  }
  for (const key of Object.keys(b)) if (!omitted((b as Json)[key])) keys--;
  return keys === 0;
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
    const out = segmentsOf(messages[index] as UIMessage, index, messages[index - 1]?.role);
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
      if (replacesList(options) || superseded.has(index)) {
        from ??= index;
        result.removed++;
      } else kept.push({ index, segments: storedSegments });
      continue;
    }
    checkUIMessage(messages[at], at);
    if (sameJson(tail.messages[index], messages[at])) kept.push({ index, segments: storedSegments });
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

/** True when the request makes the list what the user sees (a regenerate or an edit), so what it dropped goes. */
function replacesList(options: SaveChatOptions): boolean {
  return options.regenerate === true || options.request?.trigger === "regenerate-message" || typeof options.request?.messageId === "string";
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
  if (next?.role !== "assistant" || tail.messages.some((message) => message.id === next.id) || after.some((message) => message.role !== "assistant"))
    return new Set();
  return new Set(after.map((_, offset) => last + 1 + offset));
}

/**
 * The turn id of an append: its first message's id. Two saves racing to store the
 * same new message (a request sent again while the first still runs) cannot both
 * store it: the second append is refused as a repeat, and that save plans again.
 */
function turnIdOf(added: readonly BaseMessage[]): string {
  return `ui:${createHash("sha256")
    .update(added[0]?.id ?? "")
    .digest("base64url")
    .slice(0, 32)}`;
}

/** How often a save plans again after another save changed the session under it. */
const MAX_ATTEMPTS = 5;

/**
 * Saves a chat's UI messages (the whole list `onFinish` hands over, or any list
 * ending in the new ones): stores exactly the messages the session does not hold
 * yet, once, however often the same request is retried; replaces a stored message
 * the list holds a newer version of; on `regenerate`, removes what the list
 * dropped. The session is read from its end only as far as the list reaches back.
 *
 * It takes no lock: an append is refused when its first message was stored
 * meanwhile (its turn id), a replacement when the session changed length
 * (`EDIT_CONFLICT`), and the save then reads and plans again. So two saves
 * racing on one chat both land, each message once: two round trips for the
 * usual turn, one given the `loaded` chat.
 */
export async function saveChat(
  store: HistoryStore,
  key: SessionKey | Record<string, string>,
  messages: readonly UIMessage[],
  options: SaveChatOptions = {},
): Promise<SaveChatResult> {
  const sessionKey = createSessionKey(key);
  const ids = indexById(messages);
  const reach = Math.min(messages.length, 4) * 4 + 8;
  const reaches = (tail: StoredTail) => tail.messages.some((message) => ids.has(message.id));
  let snapshot = snapshotOf(options.loaded);
  for (let attempt = 1; ; attempt++) {
    // From the loaded chat, only as far back as a fresh read would go (older messages are not compared), or as far as the load kept.
    const window = snapshot && windowOf(snapshot, reach);
    const tail =
      window && reaches(window)
        ? window
        : snapshot && (snapshot.whole || reaches(snapshot))
          ? snapshot
          : await readStoredTail(store, sessionKey, reach, reaches);
    snapshot = undefined;
    const { from, rewrite, added, result } = plan(tail, messages, ids, options);
    if (from === undefined) {
      if (added.length === 0) return result;
      if ((await store.append(sessionKey, added, { turnId: turnIdOf(added) })).appended) return result;
      if (attempt < MAX_ATTEMPTS) continue;
      throw new EditConflictError(`saveChat: the chat kept changing under the save (${MAX_ATTEMPTS} attempts); nothing of this save was stored.`);
    }
    const offset = tail.offset ?? (await store.count(sessionKey)) - tail.segments.length;
    const start = offset + (tail.spans[from] as { start: number }).start;
    try {
      await store.replaceTail(sessionKey, { from: start, count: offset + tail.segments.length, messages: [...rewrite, ...added] });
      return result;
    } catch (error) {
      if (!(MemoriaError.isInstance(error) && error.code === "EDIT_CONFLICT") || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
