import { createHash } from "node:crypto";
import { type EncodedMessage, type HistoryStore, type JsonValue, type SessionKey, decodeMessage, encodeMessage } from "@memoria/core";

/** Everything a store keeps of one session that can be carried to another store. */
export interface SessionSnapshot {
  key: SessionKey;
  title?: string;
  metadata?: { [field: string]: JsonValue };
  /** The session's times, which a copy keeps. */
  createdAt?: number;
  lastActiveAt?: number;
  state: Record<string, JsonValue>;
  messages: EncodedMessage[];
}

/** One message as text that is equal for equal messages (the codec's form). */
const messageText = (message: EncodedMessage) => JSON.stringify(message);

/** Reads a session whole: its messages (codec form), state, title and metadata. */
export async function readSnapshot(store: HistoryStore, key: SessionKey): Promise<SessionSnapshot> {
  const [messages, state, info] = await Promise.all([store.read(key), store.getAllState(key), store.info(key)]);
  const snapshot: SessionSnapshot = { key, state, messages: messages.map((message, i) => encodeMessage(message, i)) };
  if (info?.title !== undefined) snapshot.title = info.title;
  if (info?.metadata !== undefined) snapshot.metadata = info.metadata;
  if (info) {
    snapshot.createdAt = info.createdAt;
    snapshot.lastActiveAt = info.lastActiveAt;
  }
  return snapshot;
}

export class CopyConflictError extends Error {
  override readonly name = "CopyConflictError";
}

/**
 * How many of the snapshot's messages `target` holds already: its session must
 * hold a prefix of them (compared message by message), else `CopyConflictError`.
 * Writes nothing: an import checks every session of a file this way before it
 * writes any.
 */
export async function storedPrefix(target: HistoryStore, snapshot: SessionSnapshot): Promise<number> {
  const { key, messages } = snapshot;
  const have = await target.count(key);
  if (have > messages.length) {
    throw new CopyConflictError(`the target's session ${JSON.stringify(key)} holds ${have} messages, more than the ${messages.length} being copied`);
  }
  if (have === 0) return 0;
  const existing = await target.read(key);
  for (let i = 0; i < existing.length; i++) {
    if (messageText(encodeMessage(existing[i] as never, i)) !== messageText(messages[i] as EncodedMessage)) {
      throw new CopyConflictError(`the target's session ${JSON.stringify(key)} differs from the source at message ${i + 1}; copy into an empty store`);
    }
  }
  return existing.length;
}

/**
 * Writes a snapshot into `target` so that running it again, after an interruption
 * or to completion, never stores a message twice: the target's messages must be a
 * prefix of the snapshot's (checked message by message), and only the rest is
 * appended, in chunks whose turn ids come from their position and content (an
 * append whose outcome was unknown is retried safely). State and info are set,
 * which is idempotent. Returns how many messages it appended.
 */
export async function writeSnapshot(target: HistoryStore, snapshot: SessionSnapshot, chunkSize = 500): Promise<number> {
  const { key, messages } = snapshot;
  const have = await storedPrefix(target, snapshot);
  let appended = 0;
  for (let from = have; from < messages.length; from += chunkSize) {
    const chunk = messages.slice(from, from + chunkSize);
    const digest = createHash("sha256").update(chunk.map(messageText).join("\n")).digest("hex").slice(0, 24);
    const result = await target.append(
      key,
      chunk.map((message) => decodeMessage(message)),
      { turnId: `copy.${from}.${digest}` },
    );
    if (result.appended) appended += chunk.length;
  }
  for (const name of Object.keys(snapshot.state)) await target.setState(key, name, snapshot.state[name] as JsonValue);
  // Last, so that the copy's own writes do not leave the migration's time as the session's activity.
  const { title, metadata, createdAt, lastActiveAt } = snapshot;
  if (title !== undefined || metadata !== undefined || createdAt !== undefined || lastActiveAt !== undefined) {
    await target.setInfo(key, { title: title ?? null, metadata: metadata ?? null, createdAt, lastActiveAt });
  }
  return appended;
}

/** The differences between a session in two stores, as sentences; empty when they hold the same. */
export function compareSnapshots(source: SessionSnapshot, target: SessionSnapshot): string[] {
  const problems: string[] = [];
  if (source.messages.length !== target.messages.length) {
    problems.push(`${source.messages.length} messages in the source, ${target.messages.length} in the target`);
  } else {
    const at = source.messages.findIndex((message, i) => messageText(message) !== messageText(target.messages[i] as EncodedMessage));
    if (at >= 0) problems.push(`message ${at + 1} differs`);
  }
  if (JSON.stringify(sorted(source.state)) !== JSON.stringify(sorted(target.state))) problems.push("state differs");
  if (source.title !== target.title) problems.push("title differs");
  if (JSON.stringify(source.metadata ?? null) !== JSON.stringify(target.metadata ?? null)) problems.push("metadata differs");
  if (source.createdAt !== target.createdAt || source.lastActiveAt !== target.lastActiveAt) problems.push("times differ");
  return problems;
}

function sorted(state: Record<string, JsonValue>): [string, JsonValue][] {
  return Object.keys(state)
    .sort()
    .map((name) => [name, state[name] as JsonValue]);
}
