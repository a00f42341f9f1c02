import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { MemoriaError } from "@memoria/core";

/**
 * A value LangGraph's serializer turned into bytes, kept as JSON in a memoria
 * state value: text when the serializer wrote UTF-8 JSON (the usual case, and
 * readable in `memoria show`), base64 otherwise.
 */
export type StoredValue = { t: string; s: string } | { t: string; b: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * What LangGraph's JSON serializer writes in place of a value it cannot encode (a
 * `BigInt`, a cycle it cannot cut) instead of failing: stored, it would come back as
 * this text where the value was.
 */
const UNSERIALIZABLE = JSON.stringify("[unable to serialize, circular reference is too complex to analyze]");

/** `value` as the serializer encodes it; one it cannot encode is a typed error, before anything is written. */
export async function storeValue(serde: SerializerProtocol, value: unknown, what: string): Promise<StoredValue> {
  const [t, bytes] = await serde.dumpsTyped(value);
  if (t === "json") {
    try {
      const s = utf8.decode(bytes);
      if (s === UNSERIALIZABLE && value !== JSON.parse(s))
        throw new MemoriaError(
          "INVALID_ARGUMENT",
          `The ${what} cannot be serialized by the checkpoint serializer (a BigInt, a symbol or a cycle it cannot cut?): nothing was saved. Keep state values JSON-serializable, or give MemoriaSaver a serde that encodes them.`,
        );
      return { t, s };
    } catch (error) {
      if (MemoriaError.isInstance(error)) throw error;
      // Not UTF-8 after all: kept as bytes below.
    }
  }
  return { t, b: Buffer.from(bytes).toString("base64") };
}

export function isStoredValue(value: unknown): value is StoredValue {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.t === "string" && (typeof record.s === "string" || typeof record.b === "string");
}

export async function loadValue(serde: SerializerProtocol, stored: StoredValue, what: string): Promise<unknown> {
  try {
    return await serde.loadsTyped(stored.t, "s" in stored ? stored.s : new Uint8Array(Buffer.from(stored.b, "base64")));
  } catch (error) {
    throw new MemoriaError("CORRUPT_DATA", `The stored ${what} could not be read back by the checkpoint serializer: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
