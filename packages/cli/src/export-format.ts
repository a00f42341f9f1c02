import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { CODEC_VERSION, type EncodedMessage, type JsonValue, createSessionKey, decodeMessage, encodeMessage } from "@memoria/core";
import { stateName, stateValue } from "@memoria/core/store-kit";
import { UsageError } from "./cli-error.js";
import type { SessionSnapshot } from "./snapshot.js";

/**
 * memoria's export: JSON Lines. The first line names the format and the codec
 * version; then, per session, one `session` line (key, title, metadata, times,
 * state, message count) followed by one `message` line per message, in the
 * codec's form (every field, as stored).
 */
export const EXPORT_FORMAT = "memoria-export";
export const EXPORT_VERSION = 1;

interface HeaderLine {
  format: typeof EXPORT_FORMAT;
  version: number;
  codec: number;
  exportedAt: string;
}

interface SessionLine {
  session: Record<string, string>;
  title?: string;
  metadata?: { [field: string]: JsonValue };
  createdAt?: number;
  lastActiveAt?: number;
  state: Record<string, JsonValue>;
  messages: number;
}

export function headerLine(): string {
  return JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, codec: CODEC_VERSION, exportedAt: new Date().toISOString() } satisfies HeaderLine);
}

/** A snapshot as the lines of an export. */
export function* snapshotLines(snapshot: SessionSnapshot): Generator<string> {
  const { key, messages, ...rest } = snapshot;
  yield JSON.stringify({ session: { ...key }, ...rest, messages: messages.length } satisfies SessionLine);
  for (const message of messages) yield JSON.stringify({ message });
}

/** Runs `check` on what line `number` holds; its failure becomes a `UsageError` naming the line. */
function atLine<T>(path: string, number: number, what: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw new UsageError(`${path}:${number} holds an invalid ${what}: ${(error as Error).message}`);
  }
}

/** Reads an export back, a session at a time; a line that is not one of its records is a `UsageError` naming the line. */
export async function* readExport(path: string): AsyncGenerator<SessionSnapshot> {
  const lines = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  let current: (SessionSnapshot & { expected: number }) | undefined;
  const finish = (): SessionSnapshot | undefined => {
    if (!current) return undefined;
    if (current.messages.length !== current.expected) {
      throw new UsageError(
        `${path}: session ${JSON.stringify(current.key)} announces ${current.expected} messages but has ${current.messages.length}; the export is cut short.`,
      );
    }
    const { expected: _expected, ...snapshot } = current;
    return snapshot;
  };
  for await (const text of lines) {
    number++;
    if (text.trim() === "") continue;
    let record: Partial<HeaderLine & SessionLine & { message: EncodedMessage }>;
    try {
      record = JSON.parse(text);
    } catch {
      throw new UsageError(`${path}:${number} is not JSON; is this a memoria export (memoria export)?`);
    }
    if (number === 1) {
      if (record.format !== EXPORT_FORMAT) throw new UsageError(`${path} is not a memoria export (its first line does not say "format": "${EXPORT_FORMAT}").`);
      if ((record.codec ?? 0) > CODEC_VERSION)
        throw new UsageError(`${path} was written with message codec ${record.codec}, newer than this memoria's (${CODEC_VERSION}); upgrade memoria.`);
      continue;
    }
    if (record.session) {
      const done = finish();
      if (done) yield done;
      const { session, messages, ...rest } = record as SessionLine;
      const key = atLine(path, number, "session key", () => createSessionKey(session));
      atLine(path, number, "state", () => {
        for (const [name, value] of Object.entries(rest.state ?? {})) {
          stateName(name);
          stateValue(value);
        }
      });
      current = { ...rest, key, state: rest.state ?? {}, messages: [], expected: messages ?? 0 };
    } else if (record.message && current) {
      const { message } = record;
      const position = current.messages.length;
      atLine(path, number, "message", () => encodeMessage(decodeMessage(message), position)); // as a store would take it
      current.messages.push(message);
    } else {
      throw new UsageError(`${path}:${number} is neither a session nor a message line.`);
    }
  }
  const done = finish();
  if (done) yield done;
}
