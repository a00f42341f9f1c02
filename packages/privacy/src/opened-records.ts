import type { BaseMessage } from "@langchain/core/messages";
import { type EncodedMessage, decodeMessage } from "@memoria/core";
import { decodeFrozenMessage } from "@memoria/core/store-kit";

interface Opened {
  /** The stored record it was opened from, whole: a lookup must match it exactly. */
  envelope: string;
  /** The record's message as parsed JSON: decoding it again makes a new message without a parse. */
  message: EncodedMessage;
  /** With `frozen`: the message every read of this record shares, decoded (and frozen) by the first. */
  shared?: BaseMessage;
  /** Characters it stands for (its JSON text and its envelope), for the budget. */
  size: number;
}

/**
 * Messages this process has opened (or sealed) recently, per session, so that a
 * windowed read (the last 20 messages, most of them read last turn too) opens only
 * what is new. An entry is found by the session's stored id and the record's
 * position, and used only if the stored record is the very one it was opened from
 * (the whole envelope: data key id, position and sealed text, compared as text), so
 * a copied, moved or changed record misses and is opened (and refused) as usual. Bounded by `budget`
 * characters; a session's entries go when it is cleared or erased through this store.
 *
 * What a hit hands out: with `frozen`, one deeply frozen message per record that every
 * read shares (as the in-memory and file stores share theirs: decoding a message
 * again was most of what an encrypted whole read cost over a plain one); without it, a
 * new copy per read.
 */
export class OpenedRecords {
  readonly #sessions = new Map<string, Map<number, Opened>>();
  #size = 0;
  /** The session `set` last touched: the last in `#sessions`' order while it is there. */
  #newest: string | undefined;

  constructor(
    private readonly budget: number,
    private readonly frozen: boolean,
  ) {}

  /** The message of the record at `position`, if this very record was opened (or sealed) here before. */
  get(session: string, position: number, envelope: string): BaseMessage | undefined {
    if (this.budget === 0) return undefined;
    const opened = this.#sessions.get(session)?.get(position);
    if (opened?.envelope !== envelope) return undefined;
    if (!this.frozen) return decodeMessage(opened.message);
    opened.shared ??= decodeFrozenMessage(opened.message);
    return opened.shared;
  }

  set(session: string, position: number, envelope: string, message: EncodedMessage, textLength: number): void {
    const size = textLength + envelope.length;
    if (this.budget === 0 || size > this.budget / 4) return;
    let records = this.#sessions.get(session);
    if (!records) {
      records = new Map();
      this.#sessions.set(session, records);
    } else if (session !== this.#newest) {
      // Most recently used last. Not moved when it is last already: each move leaves a
      // hole that iterating from the oldest must step over until the map is rebuilt.
      this.#sessions.delete(session);
      this.#sessions.set(session, records);
    }
    this.#newest = session;
    const replaced = records.get(position);
    if (replaced) this.#size -= replaced.size;
    records.set(position, { envelope, message, size });
    this.#size += size;
    if (this.#size > this.budget) this.#evict(records);
  }

  /**
   * Down to nine tenths of the budget, oldest sessions first; the session in use
   * (last in order) loses its oldest records, never its newest. In batches: evicting
   * one record per `set` walked, each time, over the holes the earlier deletions left
   * at the front of the map (a long session's encrypted turn here went from 205 µs
   * to 236 µs and on, growing with the session).
   */
  #evict(inUse: Map<number, Opened>): void {
    const target = this.budget * 0.9;
    for (const [session, records] of this.#sessions) {
      if (this.#size <= target) return;
      if (records !== inUse) {
        this.forget(session);
        continue;
      }
      for (const [position, opened] of records) {
        if (this.#size <= target || records.size === 1) return;
        records.delete(position);
        this.#size -= opened.size;
      }
    }
  }

  forget(session: string): void {
    const records = this.#sessions.get(session);
    if (!records) return;
    for (const opened of records.values()) this.#size -= opened.size;
    this.#sessions.delete(session);
  }

  forgetAll(): void {
    this.#sessions.clear();
    this.#size = 0;
    this.#newest = undefined;
  }
}
