import { type HistoryStore, MemoriaError, type SessionKey, type SessionKeyFilter, createKeyFilter, createSessionKey, decodeSessionKey } from "@memoria/core";
import { UsageError } from "./cli-error.js";

/**
 * A session named on the command line: `{"userId":"ada","conversationId":"c1"}`
 * (JSON), `conversationId=c1 userId=ada` (as `memoria sessions` prints it),
 * `conversationId=c1&userId=ada` (the encoded form, as in `sessions --json`), or a
 * bare value, returned as it is: a `sessionId` (see {@link resolveSession}). Values are
 * percent-escaped where they hold a space, `&`, `=` or `%`, as printed.
 */
export function parseSession(text: string): SessionKey | string {
  try {
    if (text.startsWith("{")) return createSessionKey(JSON.parse(text) as Record<string, unknown>);
    if (!text.includes("=")) return text; // a bare sessionId
    if (text.includes("&") || !/\s/.test(text.trim())) return decodeSessionKey(text.trim());
    const record: Record<string, string> = {};
    for (const pair of text.trim().split(/\s+/)) {
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new MemoriaError("INVALID_ARGUMENT", `${JSON.stringify(pair)} is not field=value.`);
      record[decodeURIComponent(pair.slice(0, eq))] = decodeURIComponent(pair.slice(eq + 1));
    }
    return createSessionKey(record);
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof URIError || MemoriaError.isInstance(error)) {
      throw new UsageError(
        `${JSON.stringify(text)} does not name a session: ${(error as Error).message} Give a sessionId, field=value field=value (as memoria sessions prints), or JSON.`,
      );
    }
    throw error;
  }
}

/**
 * The session `text` names in `store`: a bare value is the session whose key is
 * just that `sessionId`, else the one session whose `sessionId` it is; several
 * such sessions are a usage error that lists them.
 */
export async function resolveSession(store: HistoryStore, text: string): Promise<SessionKey> {
  const parsed = parseSession(text);
  if (typeof parsed !== "string") return parsed;
  const exact = createSessionKey({ sessionId: parsed });
  if ((await store.count(exact)) > 0 || (await store.info(exact))) return exact;
  const { sessions } = await store.list({ sessionId: parsed }, { limit: 6 });
  if (sessions.length === 1) return sessions[0]!;
  if (sessions.length === 0) return exact; // the caller says there is no such session
  const shown = sessions
    .slice(0, 5)
    .map((key) => `  ${showKey(key)}`)
    .join("\n");
  throw new UsageError(
    `sessionId ${JSON.stringify(parsed)} is in ${sessions.length > 5 ? "more than 5" : sessions.length} sessions; name one with its fields:\n${shown}`,
  );
}
/** `--user u` and `--where field=value` (repeatable) as one key filter. */
export function parseFilter(options: { user?: string; where?: string[] }): SessionKeyFilter {
  return pairsFilter("--where", options.where ?? [], options.user === undefined ? {} : { userId: options.user });
}

/** `field=value` pairs given to `flag` (and `more`) as one key filter; a malformed one is a usage error. */
export function pairsFilter(flag: string, pairs: readonly string[], more: Record<string, string> = {}): SessionKeyFilter {
  const record: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`${flag} takes field=value, got ${JSON.stringify(pair)}.`);
    const field = pair.slice(0, eq);
    if (Object.hasOwn(record, field))
      throw new UsageError(`${flag} names ${field} twice (${JSON.stringify(record[field])} and ${JSON.stringify(pair.slice(eq + 1))}): give each field once.`);
    record[field] = pair.slice(eq + 1);
  }
  try {
    return createKeyFilter({ ...record, ...more });
  } catch (error) {
    if (MemoriaError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
}

/** A value as printed: percent-escaped only where it would not read back (a space, `&`, `=`, `%`). */
const printable = (value: string) => (/[\s&=%]/.test(value) ? encodeURIComponent(value) : value);

/** A key as one line: its fields, `field=value`, in name order (as every store gives the same key); `memoria show` takes it back. */
export function showKey(key: SessionKeyFilter): string {
  return Object.keys(key)
    .sort()
    .map((field) => `${printable(field)}=${printable(key[field] as string)}`)
    .join(" ");
}
