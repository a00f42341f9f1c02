import type { Item } from "@langchain/langgraph-checkpoint";
import { type JsonValue, MemoriaError } from "@memoria/core";
import { stateValue } from "@memoria/core/store-kit";
import { createHash } from "node:crypto";

/** One item of a LangGraph store, as the state value `lg.s.<digest>` of its scope's record keeps it. */
export interface ItemRecord {
  v: 1;
  ns: string[];
  key: string;
  /** Absent once deleted: the state value stays, emptied, until the scope is erased. */
  value?: Record<string, JsonValue>;
  createdAt: string;
  updatedAt: string;
  /** Embeddings of the item's indexed texts, for `search({ query })`. */
  vectors?: number[][];
  /** Minutes the item lives after each write (and read, when reads renew it: see item-ttl.ts's Renewal). */
  ttl?: number;
  /** When this version expires unless a read renewed it, ISO 8601: from then on it is gone to every read, and `sweep()` empties it. */
  expiresAt?: string;
}

export const ITEM_PREFIX = "lg.s.";

export function itemName(namespace: readonly string[], key: string): string {
  return `${ITEM_PREFIX}${createHash("sha256")
    .update(JSON.stringify([...namespace, key]))
    .digest("base64url")
    .slice(0, 22)}`;
}

export function parseItem(value: JsonValue | undefined, name: string): ItemRecord | undefined {
  if (value === undefined) return undefined;
  const record = value as Record<string, unknown>;
  const ok =
    typeof value === "object" &&
    value !== null &&
    record.v === 1 &&
    Array.isArray(record.ns) &&
    record.ns.every((label) => typeof label === "string") &&
    typeof record.key === "string" &&
    typeof record.createdAt === "string" &&
    typeof record.updatedAt === "string" &&
    (record.value === undefined || (typeof record.value === "object" && record.value !== null && !Array.isArray(record.value))) &&
    (record.expiresAt === undefined || (typeof record.expiresAt === "string" && typeof record.ttl === "number"));
  if (!ok) throw new MemoriaError("CORRUPT_DATA", `The LangGraph store item "${name}" is not a valid item; it was not written by MemoriaStore or was damaged.`);
  return value as unknown as ItemRecord;
}

/** A deleted (or swept) item: its place and times stay until the scope is erased; its value, vectors and expiry go. */
export function emptied(record: ItemRecord, now: string): ItemRecord {
  return { v: 1, ns: record.ns, key: record.key, createdAt: record.createdAt, updatedAt: now };
}

/** The item LangGraph's calls return, its value a copy of the record's (records may be held for later reads). */
export function toItem(record: ItemRecord): Item {
  return {
    namespace: [...record.ns],
    key: record.key,
    value: structuredClone(record.value) as Record<string, unknown>,
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  };
}

/** An item's value as JSON, or a typed error naming what is not. */
export function itemValue(value: unknown, key: string): Record<string, JsonValue> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new MemoriaError("INVALID_ARGUMENT", `The value of store item "${key}" must be an object, got ${Array.isArray(value) ? "an array" : typeof value}.`);
  }
  return stateValue(value) as Record<string, JsonValue>;
}

/** LangGraph's filter: a value, or operators `$eq $ne $gt $gte $lt $lte $in $nin` on the item's top-level field. */
export function matchesFilter(value: Record<string, JsonValue>, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, wanted]) => {
    const actual = Object.hasOwn(value, field) ? value[field] : undefined;
    if (typeof wanted !== "object" || wanted === null || Array.isArray(wanted) || !Object.keys(wanted).some((op) => op.startsWith("$"))) {
      return sameJson(actual, wanted);
    }
    return Object.entries(wanted as Record<string, unknown>).every(([op, operand]) => {
      switch (op) {
        case "$eq":
          return sameJson(actual, operand);
        case "$ne":
          return !sameJson(actual, operand);
        case "$gt":
          return Number(actual) > Number(operand);
        case "$gte":
          return Number(actual) >= Number(operand);
        case "$lt":
          return Number(actual) < Number(operand);
        case "$lte":
          return Number(actual) <= Number(operand);
        case "$in":
          return Array.isArray(operand) && operand.some((option) => sameJson(actual, option));
        case "$nin":
          return !Array.isArray(operand) || !operand.some((option) => sameJson(actual, option));
        default:
          throw new MemoriaError("INVALID_ARGUMENT", `Unknown filter operator ${JSON.stringify(op)} on field "${field}".`);
      }
    });
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
