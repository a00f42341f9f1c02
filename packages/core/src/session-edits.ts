import { MemoriaError } from "./errors.js";
import type { HistoryStore, TurnLock } from "./history-store.js";
import type { JsonValue } from "./json-value.js";
import { EditConflictError, type MessageEdit, checkCut, planEdit } from "./message-edits.js";
import { type SessionKey, createSessionKey, encodeSessionKey } from "./session-key.js";

export interface EditResult {
  /** Messages the session holds after the edit. */
  count: number;
  /** Messages removed (the edited one and what followed it), and messages written back. */
  removed: number;
  added: number;
  /** Derived state values the edit made stale and reset (rebuilt by their strategy on its next turn). */
  reset: string[];
}

/**
 * How far into a session a derived state value has read: `folded` (summaries) or
 * `processed` (entities, knowledge graph), counted from the session's first
 * message, with `trimmed` messages compaction removed before the stored ones.
 */
function readMark(value: JsonValue | undefined): { mark: number; trimmed: number } | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const mark = typeof value.folded === "number" ? value.folded : typeof value.processed === "number" ? value.processed : undefined;
  if (mark === undefined) return undefined;
  return { mark, trimmed: typeof value.trimmed === "number" ? value.trimmed : 0 };
}

/**
 * The state values that read a message at stored position `from` or later and so
 * must be rebuilt. A summary of a compacted session cannot be rebuilt (the
 * messages it folded are gone), so an edit inside what it folded is refused.
 */
function staleState(state: Record<string, JsonValue>, from: number): string[] {
  const stale: string[] = [];
  for (const name of Object.keys(state)) {
    const read = readMark(state[name]);
    if (!read || read.trimmed + from >= read.mark) continue;
    if (read.trimmed > 0) {
      throw new EditConflictError(
        `State "${name}" folded message ${from} into a summary whose older messages were removed (compaction); it cannot be rebuilt, so that message can no longer be edited.`,
      );
    }
    stale.push(name);
  }
  return stale;
}

/** Runs `body` under the caller's lock, or the session's turn lock taken (and released) here. */
async function underLock<T>(store: HistoryStore, key: SessionKey, lock: TurnLock | undefined, body: (lock: TurnLock) => Promise<T>): Promise<T> {
  if (lock) return body(lock);
  const held = await store.lock(key);
  try {
    return await body(held);
  } finally {
    await held.release();
  }
}

/**
 * Deletes, replaces or truncates messages of a session (see {@link MessageEdit}),
 * atomically, under the session's turn lock (pass `lock` when you hold it), never
 * leaving a tool call without its result. Derived state that read the changed
 * messages is reset first, so a crash in between rebuilds it from unchanged
 * messages at worst; its strategy rebuilds it on the session's next turn.
 */
export async function editSession(store: HistoryStore, key: SessionKey, edit: MessageEdit, options: { lock?: TurnLock } = {}): Promise<EditResult> {
  const sessionKey = createSessionKey(key);
  return underLock(store, sessionKey, options.lock, async (lock) => {
    const current = await store.read(sessionKey);
    const plan = planEdit(current, edit);
    const reset = staleState(await store.getAllState(sessionKey), plan.from);
    for (const name of reset) await store.setState(sessionKey, name, null, { lock });
    await store.replaceTail(sessionKey, plan, { lock });
    return { count: plan.from + plan.messages.length, removed: current.length - plan.from, added: plan.messages.length, reset };
  });
}

export interface BranchOptions {
  /** Copy only the first `messages` messages (the conversation up to a point). @default all */
  messages?: number;
  /** The source session's turn lock, when you hold it. */
  lock?: TurnLock;
}

/**
 * Copies a session, or its first `messages` messages, into a new session `to`
 * (which must not exist), with its title and metadata; derived state comes along
 * where it read no further than the copy goes. One append writes the messages, so
 * they are all there or not at all.
 */
export async function branchSession(store: HistoryStore, from: SessionKey, to: SessionKey, options: BranchOptions = {}): Promise<{ messages: number }> {
  const source = createSessionKey(from);
  const target = createSessionKey(to);
  if (encodeSessionKey(source) === encodeSessionKey(target))
    throw new MemoriaError("INVALID_ARGUMENT", "A branch needs a new session key, not the one it copies.");
  return underLock(store, source, options.lock, async () => {
    const messages = await store.read(source);
    const n = options.messages ?? messages.length;
    if (!Number.isSafeInteger(n) || n < 0 || n > messages.length) {
      throw new MemoriaError("INVALID_ARGUMENT", `branch: messages must be from 0 to ${messages.length}, got ${String(n)}.`);
    }
    checkCut(messages, n - 1);
    if ((await store.count(target)) > 0 || (await store.info?.(target)) !== undefined) {
      throw new EditConflictError("The branch's session exists already; give the branch a new key.");
    }
    if (n > 0) await store.append(target, messages.slice(0, n));
    const state = await store.getAllState(source);
    for (const name of Object.keys(state)) {
      const read = readMark(state[name]);
      if (!read || read.mark <= read.trimmed + n) await store.setState(target, name, state[name] as JsonValue);
    }
    const info = await store.info?.(source);
    if (info && (info.title !== undefined || info.metadata !== undefined) && store.setInfo) {
      await store.setInfo(target, { title: info.title ?? null, metadata: info.metadata ?? null });
    }
    return { messages: n };
  });
}
