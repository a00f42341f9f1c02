import type { KeyObject } from "node:crypto";
import { type BaseMessage, ChatMessage } from "@langchain/core/messages";
import { type EncodedMessage, IntegrityError, type JsonValue, type SessionKey, decodeMessage } from "@memoria/core";
import type { OpenedRecords } from "./opened-records.js";
import { open, seal } from "./seal.js";

/** The role of a stored sealed message: all a store (or anyone reading it) learns of it. */
export const SEALED_ROLE = "memoria.sealed";
const MESSAGE_PREFIX = "ms1.";
const STATE_PREFIX = "ss1.";

/** A sealed message as read back: which data key sealed it, its position, and where its sealed text starts. */
export interface SealedMessage {
  /** The stored text whole: what the opened-record cache compares. */
  envelope: string;
  dataKeyId: string;
  position: number;
  /** Index in `envelope` where the sealed text starts. */
  sealedAt: number;
}

const messageAad = (storedKey: string, position: number) => `memoria.message|${storedKey}|${position}`;
const stateAad = (storedKey: string, name: string) => `memoria.state|${storedKey}|${name}`;

/**
 * A message's stored JSON text sealed into a generic message that any store keeps
 * as it is: `ms1.<data key id>.<position>.<sealed>`. The session and the position
 * are bound as associated data, so the record opens only where it was written.
 */
export function sealMessage(dataKey: { id: string; key: KeyObject }, storedKey: string, position: number, payload: string): BaseMessage {
  const sealed = seal(dataKey.key, Buffer.from(payload), messageAad(storedKey, position));
  return new ChatMessage({ role: SEALED_ROLE, content: `${MESSAGE_PREFIX}${dataKey.id}.${position}.${sealed}` });
}

/** Reads the envelope of a stored message; a message that is not one is refused. */
export function parseSealedMessage(key: SessionKey, message: BaseMessage): SealedMessage {
  const content = message.content;
  if ((message as ChatMessage).role !== SEALED_ROLE || typeof content !== "string" || !content.startsWith(MESSAGE_PREFIX)) {
    throw new IntegrityError(key, "not-sealed", "a stored message is not sealed (written without encryption, or replaced)");
  }
  const idEnd = content.indexOf(".", MESSAGE_PREFIX.length);
  const positionEnd = idEnd < 0 ? -1 : content.indexOf(".", idEnd + 1);
  const position = positionEnd < 0 ? Number.NaN : Number(content.slice(idEnd + 1, positionEnd));
  if (idEnd <= MESSAGE_PREFIX.length || !Number.isSafeInteger(position) || position < 0 || String(position) !== content.slice(idEnd + 1, positionEnd) || positionEnd === content.length - 1) {
    throw new IntegrityError(key, "tampered", "a sealed message has a malformed envelope");
  }
  return { envelope: content, dataKeyId: content.slice(MESSAGE_PREFIX.length, idEnd), position, sealedAt: positionEnd + 1 };
}

/**
 * Checks that read records stand in an unbroken run of positions (a window may
 * start anywhere; records removed by `trim` are only ever the oldest), then opens
 * each. A record moved, copied or dropped within the session breaks the run.
 */
export function openMessages(
  key: SessionKey,
  storedKey: string,
  records: readonly SealedMessage[],
  dataKey: { id: string; key: KeyObject },
  opened: OpenedRecords,
): BaseMessage[] {
  const out = new Array<BaseMessage>(records.length);
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as SealedMessage;
    if (record.dataKeyId !== dataKey.id) throw new IntegrityError(key, "misplaced", `the record at position ${record.position} is sealed under another session's data key`);
    if (i > 0 && record.position !== (records[i - 1] as SealedMessage).position + 1) {
      throw new IntegrityError(key, "misplaced", `the record at position ${record.position} follows position ${(records[i - 1] as SealedMessage).position}`);
    }
    let message = opened.get(storedKey, record.position, record.envelope);
    if (message === undefined) {
      const bytes = open(dataKey.key, record.envelope.slice(record.sealedAt), messageAad(storedKey, record.position));
      if (!bytes) throw new IntegrityError(key, "tampered", `the record at position ${record.position} does not open (changed, or moved from elsewhere)`);
      const text = bytes.toString("utf8");
      message = parseOpened(key, text);
      opened.set(storedKey, record.position, record.envelope, message, text.length);
    }
    out[i] = decodeMessage(message); // a new message each read: decodeMessage copies what it takes
  }
  return out;
}

function parseOpened(key: SessionKey, text: string): EncodedMessage {
  try {
    return JSON.parse(text) as EncodedMessage;
  } catch {
    throw new IntegrityError(key, "tampered", "an opened record is not JSON");
  }
}

/** A state value's JSON text sealed under the session's data key, bound to the session and the value's name. */
export function sealState(dataKey: { id: string; key: KeyObject }, storedKey: string, name: string, value: JsonValue): string {
  return `${STATE_PREFIX}${dataKey.id}.${seal(dataKey.key, Buffer.from(JSON.stringify(value)), stateAad(storedKey, name))}`;
}

/** The data key id a sealed state value names. */
export function stateDataKeyId(key: SessionKey, stored: JsonValue): { dataKeyId: string; sealed: string } {
  if (typeof stored !== "string" || !stored.startsWith(STATE_PREFIX)) {
    throw new IntegrityError(key, "not-sealed", "a state value is not sealed (written without encryption, or replaced)");
  }
  const dot = stored.indexOf(".", STATE_PREFIX.length);
  if (dot < 0) throw new IntegrityError(key, "tampered", "a sealed state value has a malformed envelope");
  return { dataKeyId: stored.slice(STATE_PREFIX.length, dot), sealed: stored.slice(dot + 1) };
}

export function openState(key: SessionKey, storedKey: string, name: string, sealed: string, dataKey: KeyObject): JsonValue {
  const text = open(dataKey, sealed, stateAad(storedKey, name));
  if (!text) throw new IntegrityError(key, "tampered", `state "${name}" does not open (changed, or moved from another session or name)`);
  return JSON.parse(text.toString("utf8")) as JsonValue;
}

/** The raw session key, sealed into its data key record when ids are hashed, so `list` can give it back. */
export function sealRawKey(dataKey: { key: KeyObject }, storedKey: string, raw: SessionKey): string {
  return seal(dataKey.key, Buffer.from(JSON.stringify(raw)), `memoria.rawkey|${storedKey}`);
}

export function openRawKey(dataKey: KeyObject, storedKey: string, sealed: string): Record<string, string> | undefined {
  const text = open(dataKey, sealed, `memoria.rawkey|${storedKey}`);
  return text ? (JSON.parse(text.toString("utf8")) as Record<string, string>) : undefined;
}
