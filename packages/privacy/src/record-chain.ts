import { IntegrityError, type SessionKey } from "@memoria/core";
import { type SealedMessage, linkOf } from "./sealed-records.js";

/**
 * What a session's data key record says about its history, sealed with it: where the
 * last edit started and the edit count it brought (records from that position on
 * were all written since), and the position after the last record when a trim left
 * the session empty (so positions never start over under one data key).
 */
export interface HistoryMarks {
  edit?: { count: number; from: number };
  floor?: { next: number; edit: number };
}

/** The newest record of a session as last seen or written: what a later read must not fall behind. */
export interface Head {
  dataKeyId: string;
  edit: number;
  position: number;
}

export const headOf = (record: { dataKeyId: string; edit: number; position: number }): Head => ({
  dataKeyId: record.dataKeyId,
  edit: record.edit,
  position: record.position,
});

/** True when `head` is past `than` (same data key; a later edit, or further along). */
export function isAhead(head: Head, than: Head): boolean {
  return head.dataKeyId === than.dataKeyId && (head.edit > than.edit || (head.edit === than.edit && head.position > than.position));
}

/**
 * Checks that the records of a read (a window that ends at the session's newest
 * record, each already opened) stand as they were written: in an unbroken run of positions, each naming the record before it, edit counts never going back,
 * no record older than the last edit where that edit wrote, and the newest record's
 * write whole. A window may start anywhere: records removed by `trim` are only ever
 * the oldest.
 */
export function checkRun(key: SessionKey, records: readonly SealedMessage[], marks: HistoryMarks | undefined): void {
  const edit = marks?.edit;
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as SealedMessage;
    if (edit && record.position >= edit.from && record.edit < edit.count) {
      throw new IntegrityError(key, "rolled-back", `${recordAt(record)} was written before the session's last edit, which replaced it`);
    }
    if (i === 0) continue;
    const before = records[i - 1] as SealedMessage;
    if (record.position !== before.position + 1) throw new IntegrityError(key, "misplaced", `${recordAt(record)} follows position ${before.position}`);
    const linked = record.link === undefined ? before.link === undefined : record.link === linkOf(before.envelope);
    if (!linked || record.edit < before.edit) {
      throw new IntegrityError(key, "mixed", `${recordAt(record)} was not written after the record before it (records of two points in time)`);
    }
  }
  const newest = records[records.length - 1];
  // The last write's newest records are gone. (An edit never leaves this behind: it
  // seals the newest record it keeps again, as the end of its own write.)
  if (newest && newest.end > newest.position) {
    throw new IntegrityError(
      key,
      "truncated",
      `the newest record (position ${newest.position}) was written with records up to position ${newest.end}, which are gone`,
    );
  }
}

/** Where a record stands, for an error's message (worked out only when one is thrown). */
const recordAt = (record: SealedMessage): string => `the record at position ${record.position}`;

/** Refuses a read whose newest record falls behind a head seen earlier (by this process, or kept by an anchor). */
export function checkHead(key: SessionKey, newest: Head, seen: Head | undefined, where: string): void {
  if (!seen || seen.dataKeyId !== newest.dataKeyId || !isAhead(seen, newest)) return;
  if (newest.edit < seen.edit) {
    throw new IntegrityError(key, "rolled-back", `its records are from before an edit ${where} (edit ${seen.edit}; read: edit ${newest.edit})`);
  }
  throw new IntegrityError(key, "truncated", `its newest records are gone: ${where} position ${seen.position}, read ends at ${newest.position}`);
}
