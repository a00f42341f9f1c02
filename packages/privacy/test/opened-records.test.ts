import type { EncodedMessage } from "@memoria/core";
import { describe, expect, it } from "vitest";
import { OpenedRecords } from "../src/opened-records.js";

const message = (text: string): EncodedMessage => ({ v: 1, type: "human", data: { content: text } }) as EncodedMessage;
/** Adds `count` records of 100 characters (90 of text, an envelope of 10) to `session`. */
function fill(cache: OpenedRecords, session: string, from: number, count: number): void {
  for (let position = from; position < from + count; position++) cache.set(session, position, `env-${position}`.padEnd(10, "."), message(`m${position}`), 90);
}
const kept = (cache: OpenedRecords, session: string, positions: number) =>
  Array.from({ length: positions }, (_, position) => cache.get(session, position, `env-${position}`.padEnd(10, ".")) !== undefined);

describe("the opened-record cache", () => {
  it("finds a record only by its session, position and exact envelope", () => {
    const cache = new OpenedRecords(10_000, true);
    fill(cache, "a", 0, 1);
    expect(cache.get("a", 0, "env-0".padEnd(10, "."))?.content).toBe("m0");
    expect(cache.get("a", 0, "env-0".padEnd(10, "!"))).toBeUndefined();
    expect(cache.get("b", 0, "env-0".padEnd(10, "."))).toBeUndefined();
  });

  it("drops the least recently written sessions first, down to nine tenths of its budget", () => {
    const cache = new OpenedRecords(1_000, true); // ten records
    fill(cache, "old", 0, 4);
    fill(cache, "mid", 0, 4);
    fill(cache, "old", 4, 1); // "old" is written last now: "mid" goes first
    fill(cache, "new", 0, 2); // 11 records: over the budget
    expect(kept(cache, "mid", 4)).toEqual([false, false, false, false]);
    expect(kept(cache, "old", 5)).toEqual([true, true, true, true, true]);
    expect(kept(cache, "new", 2)).toEqual([true, true]);
  });

  it("keeps the newest records of a session that fills the budget alone, however long it grows", () => {
    const cache = new OpenedRecords(1_000, true);
    fill(cache, "other", 0, 3);
    fill(cache, "long", 0, 5_000);
    expect(kept(cache, "other", 3)).toEqual([false, false, false]);
    const long = kept(cache, "long", 5_000);
    const first = long.indexOf(true);
    // Nine to ten records, all of them the newest: none missing after the first kept.
    expect(5_000 - first).toBeGreaterThanOrEqual(9);
    expect(5_000 - first).toBeLessThanOrEqual(10);
    expect(long.slice(first).every(Boolean)).toBe(true);
  });

  it("hands out one frozen message per record, or (not frozen) a new copy per read", () => {
    const frozen = new OpenedRecords(10_000, true);
    const copies = new OpenedRecords(10_000, false);
    for (const cache of [frozen, copies]) fill(cache, "a", 0, 1);
    const read = (cache: OpenedRecords) => cache.get("a", 0, "env-0".padEnd(10, "."));
    expect(read(frozen)).toBe(read(frozen));
    expect(Object.isFrozen(read(frozen))).toBe(true);
    expect(read(copies)).not.toBe(read(copies));
    expect(Object.isFrozen(read(copies))).toBe(false);
  });
});
