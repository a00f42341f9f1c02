import { type JsonValue, MemoriaError } from "@memoria/core";
import { ITEM_PREFIX, type ItemRecord } from "./store-items.js";

/*
 * Per-item expiry for MemoriaStore. JS LangGraph's BaseStore has no TTL yet; the
 * names and units follow LangGraph's Python store (`TTLConfig`, `put(..., ttl=)`,
 * `get(..., refresh_ttl=)`), so an app moving between the two finds the same model:
 * minutes, a default for every put, and reads that renew what they touch.
 */

export interface StoreTtlOptions {
  /** Minutes an item lives after it was written (or last read, with `refreshOnRead`) when its put names none. @default items never expire */
  defaultTtl?: number;
  /** Whether `get` and `search` renew the expiry of the items they return, unless the call says otherwise. @default true */
  refreshOnRead?: boolean;
}

/** A put's own `ttl`: minutes, or null for an item that never expires. */
export type ItemTtl = number | null;

const MINUTE_MS = 60_000;

export function checkTtlOptions(options: StoreTtlOptions | undefined): StoreTtlOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null)
    throw new MemoriaError("INVALID_ARGUMENT", "MemoriaStore's ttl must be an object, e.g. { defaultTtl: 60 * 24 }.");
  if (options.defaultTtl !== undefined) checkMinutes(options.defaultTtl, "ttl.defaultTtl");
  if (options.refreshOnRead !== undefined && typeof options.refreshOnRead !== "boolean")
    throw new MemoriaError("INVALID_ARGUMENT", "MemoriaStore's ttl.refreshOnRead must be true or false.");
  return options;
}

function checkMinutes(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new MemoriaError("INVALID_ARGUMENT", `${what} is a number of minutes above 0 (null for no expiry), got ${JSON.stringify(value) ?? String(value)}.`);
  }
  return value;
}

/** The minutes an item written now lives: its put's own, else the default; undefined when it never expires. */
export function ttlOf(own: ItemTtl | undefined, options: StoreTtlOptions | undefined): number | undefined {
  if (own === null) return undefined;
  if (own !== undefined) return checkMinutes(own, "A store item's ttl");
  return options?.defaultTtl;
}

/** The record's expiry fields for a life of `ttl` minutes from `now` (none without a ttl). */
export function expiryFields(ttl: number | undefined, now: number): Pick<ItemRecord, "ttl" | "expiresAt"> {
  return ttl === undefined ? {} : { ttl, expiresAt: new Date(now + ttl * MINUTE_MS).toISOString() };
}

/**
 * A read's renewal of one version of an item, kept beside the item (`lg.r.<digest>`)
 * rather than in it: a read then never writes the item, so it cannot put back an
 * older value over a write made since it read. It counts only for the version it
 * names (`of`, that version's `updatedAt`); a put makes a new version, and the
 * renewal of the old one is ignored from then on. It holds times only.
 */
export interface Renewal {
  of: string;
  expiresAt: string;
}

export function renewalName(itemName: string): string {
  return `lg.r.${itemName.slice(ITEM_PREFIX.length)}`;
}

export function renewalFor(record: ItemRecord & { ttl: number }, now: number): Renewal {
  return { of: record.updatedAt, expiresAt: new Date(now + record.ttl * MINUTE_MS).toISOString() };
}

/** A stored renewal, or undefined for none (or a value that is not one, which renews nothing). */
export function parseRenewal(value: JsonValue | undefined): Renewal | undefined {
  const renewal = value as Partial<Renewal> | undefined;
  return typeof renewal?.of === "string" && typeof renewal.expiresAt === "string" ? (renewal as Renewal) : undefined;
}

/** Whether the item has expired by `now`: its own expiry, or a later one from a renewal of this very version. */
export function isExpired(record: ItemRecord, now: number, renewal?: Renewal): boolean {
  if (record.expiresAt === undefined) return false;
  const renewed = renewal?.of === record.updatedAt ? Date.parse(renewal.expiresAt) : 0;
  return Math.max(Date.parse(record.expiresAt), renewed) <= now;
}

/** Whether a read renews the items it returns: the call's say, else the store's (on by default). */
export function refreshes(own: boolean | undefined, options: StoreTtlOptions | undefined): boolean {
  return own ?? options?.refreshOnRead ?? true;
}
