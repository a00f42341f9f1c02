import { InvalidSessionKeyError, MemoriaError } from "./errors.js";

/**
 * Names one conversation: an ordered record of config field to string value,
 * e.g. `{ sessionId: "abc" }` or `{ userId: "u1", conversationId: "c7" }`.
 * Keys built by {@link createSessionKey} are frozen and have no prototype.
 */
export type SessionKey = Readonly<Record<string, string>>;

/** A filter on key fields: every given field must match exactly. */
export type SessionKeyFilter = Readonly<Record<string, string>>;

/** The longest value a session key field may hold, in UTF-16 code units. */
export const MAX_KEY_VALUE_LENGTH = 256;

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const RESERVED_FIELDS = new Set(["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty"]);
// C0 and C1 controls, DEL, and the line / paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The default session fields, as in LangChain: `configurable.sessionId`. */
export const DEFAULT_SESSION_FIELDS: readonly string[] = Object.freeze(["sessionId"]);

/**
 * The key field that marks a scope's record: where the long-term memory of a
 * subset of the session fields lives (everything of `{ userId: "ada" }`, across
 * her conversations). A scope record is an ordinary session of the store, keyed by
 * the scope's fields plus this one, so every store and every wrapper (encryption,
 * redaction, authorization) keeps it, locks it and expires it as it does a session,
 * and `delete({ userId })` erases it with the user's sessions. `list` and `recent`
 * leave scope records out unless the filter names this field. Reserved: it cannot
 * be one of the `sessionFields`.
 */
export const SCOPE_FIELD = "memoriaScope";

function checkFieldName(field: unknown): asserts field is string {
  if (typeof field !== "string" || !FIELD_NAME.test(field) || RESERVED_FIELDS.has(field)) {
    throw new InvalidSessionKeyError(String(field), "a field name must start with a letter and hold at most 64 letters, digits or underscores");
  }
}

/** A valid value made only of `[A-Za-z0-9_.-]`: the common case, which also needs no escaping. */
function isPlainValue(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_KEY_VALUE_LENGTH && PLAIN.test(value);
}

function checkValue(field: string, value: unknown, hint?: string | (() => string)): asserts value is string {
  if (isPlainValue(value)) return;
  if (typeof value === "string" && value.length > 0 && value.length <= MAX_KEY_VALUE_LENGTH && !CONTROL.test(value) && !LONE_SURROGATE.test(value)) return;
  const text = typeof hint === "function" ? hint() : hint;
  explainValue(field, value, text);
}

function explainValue(field: string, value: unknown, hint?: string): never {
  if (value === undefined || value === null) throw new InvalidSessionKeyError(field, "it is missing", hint);
  if (typeof value !== "string") {
    const what = typeof value === "number" ? `the number ${value}, which is not a whole number` : describeType(value);
    throw new InvalidSessionKeyError(field, `expected a string (or, in a call's config, a whole number), got ${what}`, hint);
  }
  if (value.length === 0) throw new InvalidSessionKeyError(field, "it is empty", hint);
  if (value.length > MAX_KEY_VALUE_LENGTH) {
    throw new InvalidSessionKeyError(field, `it is ${value.length} characters long; the limit is ${MAX_KEY_VALUE_LENGTH}`, hint);
  }
  if (CONTROL.test(value)) throw new InvalidSessionKeyError(field, "it contains a control character", hint);
  throw new InvalidSessionKeyError(field, "it contains an unpaired surrogate", hint);
}

function describeType(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Keys this module built and validated: frozen, so they stay valid. */
const validated = new WeakSet<object>();

function freezeRecord(entries: [string, string][], isKey: boolean): SessionKey {
  const record: Record<string, string> = Object.create(null);
  for (const [field, value] of entries) record[field] = value;
  Object.freeze(record);
  if (isKey && entries.length > 0) validated.add(record);
  return record;
}

function validEntries(record: unknown, label: string): [string, string][] {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    throw new InvalidSessionKeyError(label, `expected an object of field to string, got ${describeType(record)}`);
  }
  return Object.keys(record).map((field): [string, string] => {
    checkFieldName(field);
    const value = (record as Record<string, unknown>)[field];
    checkValue(field, value);
    return [field, value];
  });
}

/**
 * Validates a session key given as a record and returns a frozen copy with no
 * prototype. Field order is kept.
 */
export function createSessionKey(record: Readonly<Record<string, unknown>>): SessionKey {
  if (validated.has(record)) return record as SessionKey;
  const entries = validEntries(record, "(key)");
  if (entries.length === 0) throw new InvalidSessionKeyError("(key)", "a session key needs at least one field");
  return freezeRecord(entries, true);
}

/**
 * Validates a filter on key fields (for `list` and `delete`). An empty filter is
 * allowed here; stores decide whether it is legal for an operation.
 */
export function createKeyFilter(filter: Readonly<Record<string, unknown>> | undefined): SessionKeyFilter {
  return freezeRecord(filter === undefined ? [] : validEntries(filter, "(filter)"), false);
}

/**
 * Keys read from configs lately, per list of fields the module checked
 * ({@link validateSessionFields}, the default): every turn names its session in a
 * config of its own, and the same key is handed out again for the same values
 * (frozen, its encoding worked out once). Keyed by the values joined by NUL, which
 * no valid value holds. Bounded by count.
 */
const keysByFields = new WeakMap<readonly string[], Map<string, SessionKey>>();
const CONFIG_KEYS_LIMIT = 1024;

/** Checks a list of field names given as `sessionFields`. */
export function validateSessionFields(fields: readonly string[]): readonly string[] {
  if (!Array.isArray(fields) || fields.length === 0) {
    throw new MemoriaError("INVALID_ARGUMENT", "sessionFields must be a non-empty array of field names.");
  }
  const seen = new Set<string>();
  for (const field of fields) {
    checkFieldName(field);
    if (field === SCOPE_FIELD) throw new InvalidSessionKeyError(field, "this field name is reserved for scope records (long-term memory)");
    if (seen.has(field)) throw new MemoriaError("INVALID_ARGUMENT", `sessionFields names "${field}" twice.`);
    seen.add(field);
  }
  const checked = Object.freeze([...fields]);
  keysByFields.set(checked, new Map());
  return checked;
}
keysByFields.set(DEFAULT_SESSION_FIELDS, new Map());

/**
 * Reads the session key named by `fields` from a call's `configurable`, validating
 * each value. Only own properties count, so nothing can come from a prototype.
 */
export function sessionKeyFromConfig(
  configurable: Readonly<Record<string, unknown>> | undefined,
  fields: readonly string[] = DEFAULT_SESSION_FIELDS,
  exampleInput: unknown = "hello",
): SessionKey {
  // Each value read once: a getter cannot give the check one value and the key another.
  const raws = fields.map((field) => (configurable && Object.hasOwn(configurable, field) ? configurable[field] : undefined));
  const known = keysByFields.get(fields);
  const joined = known && raws.every((raw) => typeof raw === "string") ? raws.join("\u0000") : undefined;
  const found = joined === undefined ? undefined : known?.get(joined);
  if (found !== undefined) return found;
  const hint = () => {
    const example = Object.fromEntries(fields.map((field) => [field, `my-${field.toLowerCase()}`]));
    return `Pass it in the call's config, e.g. chain.invoke(${JSON.stringify(exampleInput)}, ${JSON.stringify({ configurable: example })})`;
  };
  const key = freezeRecord(
    fields.map((field, i): [string, string] => {
      const raw = raws[i];
      // LangChain accepts a numeric session id: a whole number is its decimal string.
      const value = typeof raw === "number" && Number.isSafeInteger(raw) ? String(raw) : raw;
      checkValue(field, value, hint);
      return [field, value];
    }),
    true,
  );
  if (known !== undefined && joined !== undefined) {
    if (known.size >= CONFIG_KEYS_LIMIT) known.clear();
    known.set(joined, key);
  }
  return key;
}

const UNRESERVED = /[^A-Za-z0-9_.-]/gu;
const PLAIN = /^[A-Za-z0-9_.-]*$/;
const utf8 = new TextEncoder();

function escapeComponent(value: string): string {
  if (PLAIN.test(value)) return value;
  return value.replace(UNRESERVED, (ch) => Array.from(utf8.encode(ch), (b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""));
}

const encodings = new WeakMap<object, string>();

/**
 * The canonical string of a key: fields sorted by name, `field=value` pairs joined
 * by `&`, every byte outside `[A-Za-z0-9_.-]` percent-encoded. Two keys are the same
 * session exactly when their encodings are equal. The result holds no `/`, `:`,
 * `{`, `}`, `*`, space or control character.
 */
export function encodeSessionKey(key: SessionKey): string {
  let encoded = encodings.get(key);
  if (encoded === undefined) {
    encoded = Object.keys(key)
      .sort()
      .map((field) => `${field}=${escapeComponent(key[field] as string)}`)
      .join("&");
    // Only validated keys are frozen, so only their encoding can be kept.
    if (validated.has(key)) encodings.set(key, encoded);
  }
  return encoded;
}

/**
 * The encoding of the key `record` names, validated as {@link createSessionKey}
 * validates it (the same errors), without building the frozen key: what a store's
 * read needs, at a fraction of the cost for a plain one-field record.
 */
export function sessionKeyId(record: Readonly<Record<string, unknown>>): string {
  // A literal such as `{ sessionId }` is never a validated key (those have no
  // prototype), so it needs no lookup in the weak maps below.
  if (typeof record === "object" && record !== null && Object.getPrototypeOf(record) === Object.prototype) {
    const fields = Object.keys(record);
    if (fields.length === 1) {
      const field = fields[0] as string;
      const value = record[field];
      // The last key given again (a turn names its session for its lock, read and
      // append): the same string, whose hash a store's map has already computed.
      if (value === last.value && field === last.field) return last.id;
      if (goodFields.has(field) && isPlainValue(value)) {
        last.field = field;
        last.value = value;
        last.id = `${field}=${value}`;
        return last.id;
      }
      checkFieldName(field);
      checkValue(field, value);
      rememberField(field);
      return `${field}=${escapeComponent(value)}`;
    }
  } else {
    const known = encodings.get(record);
    if (known !== undefined) return known;
  }
  return encodeSessionKey(createSessionKey(record));
}

/** Matches no value a record can hold until a valid key is given. */
const NONE = Symbol("none");
const last: { field: string; value: unknown; id: string } = { field: "", value: NONE, id: "" };

/** Field names that passed `checkFieldName`, so a one-field read checks its name once, not per call. Bounded: names come from code, but a bound costs nothing. */
const goodFields = new Set<string>();
function rememberField(field: string): void {
  if (goodFields.size < 1024) goodFields.add(field);
}

/**
 * Keys decoded lately, by their encoding: recall and listing decode the same few
 * conversations' keys on every turn. The keys are frozen, so one can be handed out
 * twice, and its own encoding, once worked out, stays with it. Bounded by count.
 */
const decoded = new Map<string, SessionKey>();
const DECODED_LIMIT = 1024;

/** The inverse of {@link encodeSessionKey}; the fields come back in name order. */
export function decodeSessionKey(encoded: string): SessionKey {
  const known = decoded.get(encoded);
  if (known !== undefined) return known;
  const record: Record<string, string> = Object.create(null);
  for (const pair of encoded.split("&")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new MemoriaError("CORRUPT_DATA", `Not an encoded session key: ${JSON.stringify(encoded)}`);
    record[pair.slice(0, eq)] = decodeURIComponent(pair.slice(eq + 1));
  }
  const key = createSessionKey(record);
  if (decoded.size >= DECODED_LIMIT) decoded.clear();
  decoded.set(encoded, key);
  return key;
}

/** True when every field of `filter` is present in `key` with the same value. */
export function keyMatches(key: SessionKey, filter: SessionKeyFilter): boolean {
  for (const field of Object.keys(filter)) {
    if (key[field] !== filter[field]) return false;
  }
  return true;
}
