/** A value that survives `JSON.stringify` / `JSON.parse` unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Why a value is not JSON, and where. */
export class NotJsonError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path || "(value)"}: ${reason}`);
  }
}

/**
 * Deep-copies `value` as JSON, or throws {@link NotJsonError} naming the first part
 * that JSON would change or drop. Object properties holding `undefined` are left
 * out (as JSON does, and as optional fields mean); anything else JSON cannot carry
 * (functions, symbols, bigints, NaN, Infinity, dates, maps, class instances, cycles,
 * `undefined` inside arrays) is refused rather than silently altered.
 */
export function toJsonValue(value: unknown, path = ""): JsonValue {
  // A string, the most common field by far, needs no set of ancestors.
  return typeof value === "string" ? value : copy(value, path, new Set());
}

function copy(value: unknown, path: string, ancestors: Set<object>): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new NotJsonError(path, `${value} is not a finite number`);
      return value;
    case "object":
      break;
    default:
      throw new NotJsonError(path, `a ${typeof value} cannot be stored`);
  }
  if (value === null) return null;
  if (ancestors.has(value)) throw new NotJsonError(path, "it refers to itself (a cycle)");
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      return value.map((item, i) => {
        if (item === undefined) throw new NotJsonError(`${path}[${i}]`, "undefined inside an array");
        return copy(item, `${path}[${i}]`, ancestors);
      });
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (value as object).constructor?.name ?? "an object with a prototype";
      throw new NotJsonError(path, `${name} is not a plain object`);
    }
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      const copied = copy(item, path ? `${path}.${key}` : key, ancestors);
      // A key named __proto__ stays an ordinary property (assigning it would set the prototype).
      if (key === "__proto__") Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
      else out[key] = copied;
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

/**
 * A deep copy of a value already known to be JSON (parsed JSON, or the output of
 * {@link toJsonValue}). Much faster than `structuredClone` for this case.
 */
export function cloneJson<T extends JsonValue>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, { value: cloneJson(value[key] as JsonValue), enumerable: true, writable: true, configurable: true });
  }
  return out as T;
}

/**
 * The longest text `JSON.stringify` writes for a finite number: 17 significant digits
 * in fixed notation just above 1e-6, with a sign (`-0.0000022218350844463083`).
 */
const NUMBER_TEXT_MAX = 25;

/**
 * An upper bound of the UTF-8 bytes of `JSON.stringify(value)`, from lengths alone:
 * a string's code unit becomes at most 6 bytes (`\u001f`, or a lone surrogate
 * escaped), a number at most 25 characters. Cheap where the text is not: it walks
 * the structure and never touches a string's characters.
 */
export function jsonBytesAtMost(value: JsonValue): number {
  if (typeof value === "string") return 6 * value.length + 2;
  if (typeof value === "number") return NUMBER_TEXT_MAX;
  if (typeof value === "boolean" || value === null) return 5;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (const item of value) bytes += jsonBytesAtMost(item) + 1;
    return bytes;
  }
  for (const key of Object.keys(value)) bytes += 6 * key.length + 4 + jsonBytesAtMost(value[key] as JsonValue);
  return bytes;
}
