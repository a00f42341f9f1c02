import type { KeyObject } from "node:crypto";
import { type BaseMessage, ChatMessage } from "@langchain/core/messages";
import { type EncodedMessage, IntegrityError, type JsonValue, SEALED_ROLE, type SessionKey, decodeMessage } from "@memoria/core";
import type { OpenedRecords } from "./opened-records.js";
import { open, seal } from "./seal.js";

/** Records written before chains (read, never written): `ms1.<data key id>.<position>.<sealed>`. */
const V1_PREFIX = "ms1.";
const MESSAGE_PREFIX = "ms2.";
const STATE_PREFIX = "ss1.";
const STATE_V2_PREFIX = "ss2.";
/** Characters of a record's envelope its successor names: the end of its GCM tag (12 bytes). */
const LINK_LENGTH = 16;

/** Where a record stands in its session's history, as sealed into it. */
export interface RecordPlace {
  position: number;
  /** Position of the last record of the write that stored it. */
  end: number;
  /** How many edits the session had when it was written (its generation). */
  edit: number;
  /** The end of the previous record's envelope ("" when it had none); undefined for a record of the first format. */
  link?: string;
}

/** A sealed message as read back: which data key sealed it, where it stands, and where its sealed text starts. */
export interface SealedMessage extends RecordPlace {
  /** The stored text whole: what the opened-record cache compares. */
  envelope: string;
  dataKeyId: string;
  /** Index in `envelope` where the sealed text starts. */
  sealedAt: number;
}

const messageAad = (storedKey: string, place: RecordPlace) =>
  place.link === undefined
    ? `memoria.message|${storedKey}|${place.position}`
    : `memoria.message.2|${storedKey}|${place.position}|${place.end}|${place.edit}|${place.link}`;
const stateAad = (storedKey: string, name: string, version?: number) =>
  version === undefined ? `memoria.state|${storedKey}|${name}` : `memoria.state.2|${storedKey}|${name}|${version}`;

/** What a record's successor names it by. */
export const linkOf = (envelope: string): string => envelope.slice(-LINK_LENGTH);

/**
 * The messages of one write sealed into generic messages that any store keeps as
 * they are: `ms2.<data key id>.<position>.<end>.<edit>.<link>.<sealed>`. Each is bound
 * (as associated data) to its session, its position, the last position of its write,
 * the session's edit count and the end of the record before it, so a record opens
 * only where it was written, a write cut short shows, and records of two points in
 * time cannot stand side by side.
 */
export function sealWrite(
  dataKey: { id: string; key: KeyObject },
  storedKey: string,
  at: { start: number; edit: number; link: string },
  payloads: readonly string[],
): BaseMessage[] {
  const end = at.start + payloads.length - 1;
  let link = at.link;
  return payloads.map((payload, i) => {
    const place = { position: at.start + i, end, edit: at.edit, link };
    const sealed = seal(dataKey.key, Buffer.from(payload), messageAad(storedKey, place));
    const envelope = `${MESSAGE_PREFIX}${dataKey.id}.${place.position}.${end}.${at.edit}.${link}.${sealed}`;
    link = linkOf(envelope);
    return new ChatMessage({ role: SEALED_ROLE, content: envelope });
  });
}

/**
 * The whole number written in `text` from `from` up to `to` (digits only, no leading
 * zero), or undefined. Read digit by digit: envelopes are parsed on every read.
 */
function wholeNumber(text: string, from: number, to: number): number | undefined {
  if (to <= from || to - from > 15 || (to - from > 1 && text.charCodeAt(from) === 48)) return undefined;
  let n = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    n = n * 10 + digit;
  }
  return n;
}

/** Reads the envelope of a stored message; a message that is not one is refused. */
export function parseSealedMessage(key: SessionKey, message: BaseMessage): SealedMessage {
  const content = message.content;
  if ((message as ChatMessage).role !== SEALED_ROLE || typeof content !== "string" || !(content.startsWith(MESSAGE_PREFIX) || content.startsWith(V1_PREFIX))) {
    throw new IntegrityError(key, "not-sealed", "a stored message is not sealed (written without encryption, or replaced)");
  }
  // The fields between dots: data key id, position, and (second format) end, edit and link.
  // A dot missing leaves a number undefined (wholeNumber of an empty or reversed range), which is refused below.
  const at = MESSAGE_PREFIX.length;
  const idEnd = content.indexOf(".", at);
  const positionEnd = content.indexOf(".", idEnd + 1);
  const position = wholeNumber(content, idEnd + 1, positionEnd);
  if (content.startsWith(V1_PREFIX)) {
    if (idEnd <= at || position === undefined || positionEnd + 1 === content.length) throw malformed(key);
    return { envelope: content, dataKeyId: content.slice(at, idEnd), position, end: position, edit: 0, sealedAt: positionEnd + 1 };
  }
  const endEnd = content.indexOf(".", positionEnd + 1);
  const editEnd = content.indexOf(".", endEnd + 1);
  const linkEnd = content.indexOf(".", editEnd + 1);
  const end = wholeNumber(content, positionEnd + 1, endEnd);
  const edit = wholeNumber(content, endEnd + 1, editEnd);
  if (idEnd <= at || position === undefined || end === undefined || edit === undefined || end < position || linkEnd < 0 || linkEnd + 1 === content.length) {
    throw malformed(key);
  }
  return { envelope: content, dataKeyId: content.slice(at, idEnd), position, end, edit, link: content.slice(editEnd + 1, linkEnd), sealedAt: linkEnd + 1 };
}

const malformed = (key: SessionKey) => new IntegrityError(key, "tampered", "a sealed message has a malformed envelope");

/** Opens records sealed under `dataKey`, each at most once per process while it stays unchanged; record-chain.ts then checks how they stand. */
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
    if (record.dataKeyId !== dataKey.id)
      throw new IntegrityError(key, "misplaced", `the record at position ${record.position} is sealed under another session's data key`);
    let message = opened.get(storedKey, record.position, record.envelope);
    if (message === undefined) {
      const bytes = open(dataKey.key, record.envelope.slice(record.sealedAt), messageAad(storedKey, record));
      if (!bytes) throw new IntegrityError(key, "tampered", `the record at position ${record.position} does not open (changed, or moved from elsewhere)`);
      const text = bytes.toString("utf8");
      const parsed = parseOpened(key, text);
      opened.set(storedKey, record.position, record.envelope, parsed, text.length);
      // Kept: the cache's own message (shared frozen, or copied). Not kept (no budget): this read's.
      message = opened.get(storedKey, record.position, record.envelope) ?? decodeMessage(parsed);
    }
    out[i] = message;
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

/**
 * A state value's JSON text sealed under the session's data key, bound to the session,
 * the value's name and (where a freshness anchor keeps state heads) its version:
 * `ss1.<data key id>.<sealed>`, or `ss2.<data key id>.<version>.<sealed>`.
 */
export function sealState(dataKey: { id: string; key: KeyObject }, storedKey: string, name: string, value: JsonValue, version?: number): string {
  const sealed = seal(dataKey.key, Buffer.from(JSON.stringify(value)), stateAad(storedKey, name, version));
  return version === undefined ? `${STATE_PREFIX}${dataKey.id}.${sealed}` : `${STATE_V2_PREFIX}${dataKey.id}.${version}.${sealed}`;
}

/** A sealed state value's envelope: the data key id it names, its version (if it has one), and its sealed text. */
export interface SealedState {
  dataKeyId: string;
  version?: number;
  sealed: string;
}

/** The data key id (and version) a sealed state value names. */
export function stateDataKeyId(key: SessionKey, stored: JsonValue): SealedState {
  const v2 = typeof stored === "string" && stored.startsWith(STATE_V2_PREFIX);
  if (typeof stored !== "string" || !(v2 || stored.startsWith(STATE_PREFIX))) {
    throw new IntegrityError(key, "not-sealed", "a state value is not sealed (written without encryption, or replaced)");
  }
  const dot = stored.indexOf(".", STATE_PREFIX.length);
  const versionEnd = v2 && dot > 0 ? stored.indexOf(".", dot + 1) : dot;
  const version = v2 ? wholeNumber(stored, dot + 1, versionEnd) : undefined;
  if (dot < 0 || versionEnd < 0 || (v2 && version === undefined)) throw new IntegrityError(key, "tampered", "a sealed state value has a malformed envelope");
  return { dataKeyId: stored.slice(STATE_PREFIX.length, dot), version, sealed: stored.slice(versionEnd + 1) };
}

export function openState(key: SessionKey, storedKey: string, name: string, envelope: SealedState, dataKey: KeyObject): JsonValue {
  const bytes = open(dataKey, envelope.sealed, stateAad(storedKey, name, envelope.version));
  if (!bytes) throw new IntegrityError(key, "tampered", `state "${name}" does not open (changed, or moved from another session or name)`);
  return JSON.parse(bytes.toString("utf8")) as JsonValue;
}

/** The raw session key, sealed into its data key record when ids are hashed, so `list` can give it back. */
export function sealRawKey(dataKey: { key: KeyObject }, storedKey: string, raw: SessionKey): string {
  return seal(dataKey.key, Buffer.from(JSON.stringify(raw)), `memoria.rawkey|${storedKey}`);
}

export function openRawKey(dataKey: KeyObject, storedKey: string, sealed: string): Record<string, string> | undefined {
  const text = open(dataKey, sealed, `memoria.rawkey|${storedKey}`);
  return text ? (JSON.parse(text.toString("utf8")) as Record<string, string>) : undefined;
}
