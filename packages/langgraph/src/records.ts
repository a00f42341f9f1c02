import { type JsonValue, MemoriaError } from "@memoria/core";
import { type Ranges, isRanges } from "./message-pool.js";
import { type StoredValue, isStoredValue } from "./stored-value.js";

/** A channel value as a checkpoint keeps it: serialized, or as ranges of the thread's message pool. */
export type ChannelValue = StoredValue | { p: Ranges };

/** Channel name → id of the checkpoint whose `values` hold the channel's value. */
export type Locations = [channel: string, checkpointId: string][];

/** One checkpoint, in the state value `lg.c.<digest>` of its thread's session. */
export interface CheckpointRecord {
  v: 1;
  ns: string;
  id: string;
  parent: string | null;
  /** The checkpoint with empty `channel_values`. */
  checkpoint: StoredValue;
  metadata: StoredValue;
  /** The channels this checkpoint changed (its `newVersions`), and their values. */
  values: [channel: string, value: ChannelValue][];
  /** Where every channel with a value lives: here, or in the ancestor that last changed it. */
  at: Locations;
}

/** The newest checkpoint of a namespace, in `lg.h.<digest>`. */
export interface HeadRecord {
  v: 1;
  id: string;
  at: Locations;
}

export type WriteEntry = [taskId: string, idx: number, channel: string, value: StoredValue, taskPath: string];

/** The pending writes against one checkpoint, in `lg.w.<digest>`. */
export interface WritesRecord {
  v: 1;
  w: WriteEntry[];
}

function corrupt(name: string, what: string): never {
  throw new MemoriaError("CORRUPT_DATA", `The LangGraph record "${name}" is not a valid ${what}; it was not written by this saver or was damaged.`);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";

function isLocations(value: unknown): value is Locations {
  return Array.isArray(value) && value.every((entry) => Array.isArray(entry) && entry.length === 2 && isString(entry[0]) && isString(entry[1]));
}

function isChannelValue(value: unknown): value is ChannelValue {
  return isStoredValue(value) || (isObject(value) && isRanges(value.p));
}

export function parseCheckpoint(value: JsonValue | undefined, name: string): CheckpointRecord | undefined {
  if (value === undefined) return undefined;
  const ok =
    isObject(value) &&
    value.v === 1 &&
    isString(value.ns) &&
    isString(value.id) &&
    (value.parent === null || isString(value.parent)) &&
    isStoredValue(value.checkpoint) &&
    isStoredValue(value.metadata) &&
    Array.isArray(value.values) &&
    value.values.every((entry) => Array.isArray(entry) && entry.length === 2 && isString(entry[0]) && isChannelValue(entry[1])) &&
    isLocations(value.at);
  return ok ? (value as unknown as CheckpointRecord) : corrupt(name, "checkpoint");
}

export function parseHead(value: JsonValue | undefined, name: string): HeadRecord | undefined {
  if (value === undefined) return undefined;
  const ok = isObject(value) && value.v === 1 && isString(value.id) && isLocations(value.at);
  return ok ? (value as unknown as HeadRecord) : corrupt(name, "thread head");
}

export function parseWrites(value: JsonValue | undefined, name: string): WritesRecord {
  if (value === undefined) return { v: 1, w: [] };
  const ok =
    isObject(value) &&
    value.v === 1 &&
    Array.isArray(value.w) &&
    value.w.every(
      (entry) =>
        Array.isArray(entry) &&
        entry.length === 5 &&
        isString(entry[0]) &&
        Number.isSafeInteger(entry[1]) &&
        isString(entry[2]) &&
        isStoredValue(entry[3]) &&
        isString(entry[4]),
    );
  return ok ? (value as unknown as WritesRecord) : corrupt(name, "set of pending writes");
}

/** The JSON form of a record, as `setState` takes it. */
export const asJson = (record: CheckpointRecord | HeadRecord | WritesRecord): JsonValue => record as unknown as JsonValue;
