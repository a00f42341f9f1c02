import { MemoriaError, type SessionKey, type SessionKeyFilter, createKeyFilter, createSessionKey, decodeSessionKey } from "@memoria/core";
import { UsageError } from "./cli-error.js";

/**
 * A session named on the command line: `{"userId":"ada","conversationId":"c1"}`
 * (JSON), `conversationId=c1&userId=ada` (the encoded form `memoria sessions`
 * prints, percent-escaped), or a bare value, which is the `sessionId`.
 */
export function parseSession(text: string): SessionKey {
  try {
    if (text.startsWith("{")) return createSessionKey(JSON.parse(text) as Record<string, unknown>);
    if (text.includes("=")) return decodeSessionKey(text);
    return createSessionKey({ sessionId: text });
  } catch (error) {
    if (error instanceof SyntaxError || MemoriaError.isInstance(error)) {
      throw new UsageError(`${JSON.stringify(text)} does not name a session: ${(error as Error).message} Give a sessionId, field=value&field=value, or JSON.`);
    }
    throw error;
  }
}

/** `--user u` and `--where field=value` (repeatable) as one key filter. */
export function parseFilter(options: { user?: string; where?: string[] }): SessionKeyFilter {
  const record: Record<string, string> = {};
  for (const pair of options.where ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--where takes field=value, got ${JSON.stringify(pair)}.`);
    record[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (options.user !== undefined) record.userId = options.user;
  try {
    return createKeyFilter(record);
  } catch (error) {
    if (MemoriaError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  }
}

/** A key as one line: its fields, `field=value`, in name order (as every store gives the same key). */
export function showKey(key: SessionKey): string {
  return Object.keys(key)
    .sort()
    .map((field) => `${field}=${key[field]}`)
    .join(" ");
}
