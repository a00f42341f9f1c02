import { MemoriaError } from "./errors.js";
import { type JsonValue, NotJsonError, toJsonValue } from "./json-value.js";
import { listLimit } from "./history-store.js";
import { listedBy } from "./scope-key.js";
import { type SessionKey, createKeyFilter } from "./session-key.js";

/** What a store knows about one conversation besides its messages. */
export interface SessionInfo {
  key: SessionKey;
  /** When the session was first written (epoch ms). */
  createdAt: number;
  /** When a message was last appended, or the session was created (epoch ms). */
  lastActiveAt: number;
  messageCount: number;
  /** A short title set by the app (or a titling strategy). */
  title?: string;
  /** Free-form JSON the app keeps with the conversation. */
  metadata?: { [field: string]: JsonValue };
}

/**
 * A change to a session's title and metadata. A field left out stays as it is;
 * `null` removes it. `metadata` replaces the whole object (read, change and write
 * it back under the session's lock to change one entry).
 */
export interface InfoPatch {
  title?: string | null;
  metadata?: { [field: string]: JsonValue } | null;
  /**
   * The session's times (epoch ms), for a copy that keeps a conversation's dates:
   * `memoria migrate` and `import` set the source's. A later append sets the activity
   * time as always.
   */
  createdAt?: number;
  lastActiveAt?: number;
}

export interface InfoPage {
  /** Newest activity first. */
  sessions: SessionInfo[];
  /** Present when there may be more; pass it to the next `recent` call. */
  cursor?: string;
}

export const MAX_TITLE_LENGTH = 256;
/** The largest metadata object, as JSON text. */
export const MAX_METADATA_BYTES = 65_536;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A checked patch, as stored: `undefined` leaves a field, `null` removes it, and
 * metadata is JSON text (what every store keeps).
 */
export interface CheckedPatch {
  title: string | null | undefined;
  metadata: string | null | undefined;
  createdAt: number | undefined;
  lastActiveAt: number | undefined;
}

const PATCH_FIELDS = new Set(["title", "metadata", "createdAt", "lastActiveAt"]);

/** Checks a patch; a bad title or metadata gets a typed error naming it, before anything is written. */
export function checkInfoPatch(patch: InfoPatch): CheckedPatch {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    throw new MemoriaError("INVALID_ARGUMENT", 'setInfo() takes an object such as { title: "Trip to Paris" }.');
  }
  for (const field of Object.keys(patch)) {
    if (!PATCH_FIELDS.has(field)) {
      throw new MemoriaError("INVALID_ARGUMENT", `setInfo() knows "title", "metadata", "createdAt" and "lastActiveAt", not ${JSON.stringify(field)}.`);
    }
  }
  const { title, metadata, createdAt, lastActiveAt } = patch;
  for (const [field, time] of [
    ["createdAt", createdAt],
    ["lastActiveAt", lastActiveAt],
  ] as const) {
    if (time !== undefined && (!Number.isSafeInteger(time) || time < 0)) {
      throw new MemoriaError("INVALID_ARGUMENT", `setInfo() option "${field}" must be a time in epoch milliseconds, got ${JSON.stringify(time)}.`);
    }
  }
  if (createdAt !== undefined && lastActiveAt !== undefined && createdAt > lastActiveAt) {
    throw new MemoriaError("INVALID_ARGUMENT", 'setInfo() option "createdAt" must not be after "lastActiveAt".');
  }
  if (title !== undefined && title !== null) {
    if (typeof title !== "string" || title.length === 0 || title.length > MAX_TITLE_LENGTH || CONTROL.test(title)) {
      throw new MemoriaError(
        "INVALID_ARGUMENT",
        `A session title must be 1 to ${MAX_TITLE_LENGTH} characters without control characters (or null to remove it).`,
      );
    }
  }
  return { title, metadata: metadata === undefined || metadata === null ? metadata : metadataText(metadata), createdAt, lastActiveAt };
}

function metadataText(metadata: unknown): string {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
    throw new MemoriaError("INVALID_ARGUMENT", "Session metadata must be a JSON object (or null to remove it).");
  }
  let text: string;
  try {
    text = JSON.stringify(toJsonValue(metadata));
  } catch (error) {
    if (error instanceof NotJsonError) throw new MemoriaError("INVALID_ARGUMENT", `Session metadata must be JSON: ${error.message}.`);
    throw error;
  }
  if (Buffer.byteLength(text) > MAX_METADATA_BYTES) {
    throw new MemoriaError("INVALID_ARGUMENT", `Session metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON.`);
  }
  return text;
}

/** A session's info from what a store keeps: times, count, and the title and metadata text. */
export function sessionInfo(
  key: SessionKey,
  fields: { createdAt: number; lastActiveAt: number; messageCount: number; title?: string | null; metadata?: string | null },
): SessionInfo {
  const info: SessionInfo = { key, createdAt: fields.createdAt, lastActiveAt: fields.lastActiveAt, messageCount: fields.messageCount };
  if (fields.title) info.title = fields.title;
  if (fields.metadata) {
    try {
      info.metadata = JSON.parse(fields.metadata) as { [field: string]: JsonValue };
    } catch {
      throw new MemoriaError("CORRUPT_DATA", "A session's stored metadata is not JSON.");
    }
  }
  return info;
}

/**
 * The cursor of a newest-first page: the last entry's activity time and encoded
 * key, so the next page starts strictly after it even when times tie.
 */
export function recentCursor(lastActiveAt: number, id: string): string {
  return `${lastActiveAt}:${id}`;
}

/** Reads a `recent` cursor back; a cursor that is not one gets a typed error. */
export function parseRecentCursor(cursor: string | undefined): { lastActiveAt: number; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const colon = typeof cursor === "string" ? cursor.indexOf(":") : -1;
  const lastActiveAt = colon > 0 ? Number(cursor.slice(0, colon)) : Number.NaN;
  if (!Number.isSafeInteger(lastActiveAt) || colon === cursor.length - 1) {
    throw new MemoriaError("INVALID_ARGUMENT", 'recent() option "cursor" must be the cursor of a page recent() returned.');
  }
  return { lastActiveAt, id: cursor.slice(colon + 1) };
}

/** True when an entry (time, id) comes after the cursor in newest-first order. */
export function afterCursor(after: { lastActiveAt: number; id: string } | undefined, lastActiveAt: number, id: string): boolean {
  if (!after) return true;
  return lastActiveAt < after.lastActiveAt || (lastActiveAt === after.lastActiveAt && id > after.id);
}

/**
 * One `recent` page of sessions a store scans (it has no index to walk): those
 * matching `filter` and after the cursor, newest first, at most `limit`, with the
 * cursor of the next page when there is one. `key` gives an entry's session key.
 */
export function recentPage<T extends { lastActiveAt: number; id: string }>(
  entries: Iterable<T>,
  key: (entry: T) => SessionKey,
  filter: Readonly<Record<string, unknown>> | undefined,
  options: { limit?: number; cursor?: string } | undefined,
): { page: T[]; cursor?: string } {
  const match = createKeyFilter(filter);
  const limit = listLimit(options);
  const after = parseRecentCursor(options?.cursor);
  const found: T[] = [];
  for (const entry of entries) if (afterCursor(after, entry.lastActiveAt, entry.id) && listedBy(key(entry), match)) found.push(entry);
  found.sort(byRecent);
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  return found.length > limit && last ? { page, cursor: recentCursor(last.lastActiveAt, last.id) } : { page };
}

/** Newest activity first; ties by encoded key. */
export function byRecent(a: { lastActiveAt: number; id: string }, b: { lastActiveAt: number; id: string }): number {
  return b.lastActiveAt - a.lastActiveAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
