import { createHash } from "node:crypto";
import { type HistoryStore, MemoriaError } from "@memoria/core";
import { outsideCall } from "./outside-call.js";
import type { Head } from "./record-chain.js";

/**
 * Somewhere outside the encrypted store that keeps, per session, the newest head
 * memoria wrote (its messages' newest record, each state value's version), so that a
 * store restored whole to an older consistent point (every record, state value and
 * data key as they once were) is caught: nothing inside a store an attacker can
 * write to can tell that apart from the truth. A second store, a key-value service
 * the attacker cannot reach, a signed log: anything with these two calls.
 *
 * `set` is called after the write it records was stored, so the anchor is never
 * ahead of the store; a read refuses a store that is behind it. Values are opaque
 * strings of at most 100 characters; `session` is the session as stored (hashed
 * where ids are), `item` is `messages` or `state.<name>`.
 */
export interface FreshnessAnchor {
  get(session: string, item: string): Promise<string | undefined>;
  set(session: string, item: string, value: string): Promise<void>;
}

/** An anchor kept as state values of another store (one session per anchored session, named by a hash). */
export function storeAnchor(store: HistoryStore): FreshnessAnchor {
  if (typeof store?.getState !== "function" || typeof store.setState !== "function") {
    throw new MemoriaError("INVALID_ARGUMENT", "storeAnchor needs a store (a HistoryStore) to keep the heads in.");
  }
  const keyOf = (session: string) => ({ memoriaAnchor: createHash("sha256").update(session).digest("hex") });
  return {
    get: async (session, item) => {
      const value = await store.getState(keyOf(session), item);
      return typeof value === "string" ? value : undefined;
    },
    set: (session, item, value) => store.setState(keyOf(session), item, value),
  };
}

export const MESSAGES_ITEM = "messages";
export const stateItem = (name: string) => `state.${name}`;

/** The anchor's value, or a typed error naming what failed: a read never goes on unanchored. */
export async function anchored(anchor: FreshnessAnchor | undefined, session: string, item: string): Promise<string | undefined> {
  if (!anchor) return undefined;
  const value = await outsideCall(`The freshness anchor failed to give the head of ${item}`, "not-stored", () => anchor.get(session, item));
  return typeof value === "string" ? value : undefined;
}

/**
 * Records a head after its write was stored. A failure leaves the write stored and
 * the anchor behind (later reads are checked against the older head): the error
 * says the write's outcome is unknown, and retrying with the same turn id stores
 * nothing twice.
 */
export async function anchor(anchor: FreshnessAnchor | undefined, session: string, item: string, value: string): Promise<void> {
  if (!anchor) return;
  await outsideCall("The write was stored, but the freshness anchor failed to record it", "unknown", () => anchor.set(session, item, value));
}

export const headText = (head: Head) => `${head.dataKeyId}.${head.edit}.${head.position}`;

export function parseHead(text: string | undefined): Head | undefined {
  const [dataKeyId, edit, position] = text?.split(".") ?? [];
  if (!dataKeyId || edit === undefined || position === undefined) return undefined;
  return { dataKeyId, edit: Number(edit), position: Number(position) };
}

/** A state value's version as the anchor keeps it: the data key it was sealed under, and its number. */
export interface StateVersion {
  dataKeyId: string;
  version: number;
}

export const versionText = (v: StateVersion) => `${v.dataKeyId}.${v.version}`;

export function parseVersion(text: string | undefined): StateVersion | undefined {
  const [dataKeyId, version] = text?.split(".") ?? [];
  return dataKeyId && version !== undefined ? { dataKeyId, version: Number(version) } : undefined;
}
