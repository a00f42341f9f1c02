import type { BaseMessage } from "@langchain/core/messages";
import { serializeMessage } from "@memoria/core";

/** Spans `[from, to)` of a thread's message pool that, joined, make one channel value. */
export type Ranges = [number, number][];

/** Where a channel value's messages sit in the pool, and which are not there yet. */
export interface Located {
  ranges: Ranges;
  /** Messages to append to the pool, in order, before `ranges` are valid. */
  fresh: BaseMessage[];
}

/**
 * A thread's messages, each stored once, as this process knows them: the memoria
 * session's messages in order. A `messages` channel value is kept as ranges of
 * this pool instead of a copy, so storage grows with the conversation, not with
 * its square. The pool only grows: an edit, a fork or a summary that replaces old
 * messages appends what is new and points at what is kept.
 */
export class MessagePool {
  readonly #messages: BaseMessage[] = [];
  readonly #ids: (string | undefined)[] = [];
  readonly #byId = new Map<string, number[]>();
  readonly #positions = new WeakMap<BaseMessage, number>();

  constructor(messages: readonly BaseMessage[]) {
    this.adopt(messages);
  }

  get length(): number {
    return this.#messages.length;
  }

  /** Takes appended messages into the pool, after the store holds them. */
  adopt(messages: readonly BaseMessage[]): void {
    for (const message of messages) {
      const position = this.#messages.length;
      this.#messages.push(message);
      this.#ids.push(message.id);
      this.#positions.set(message, position);
      if (message.id !== undefined) {
        const positions = this.#byId.get(message.id);
        if (positions) positions.push(position);
        else this.#byId.set(message.id, [position]);
      }
    }
  }

  /** The messages of `ranges`, or undefined when the pool is shorter than they need. */
  slice(ranges: Ranges): BaseMessage[] | undefined {
    const out: BaseMessage[] = [];
    for (const [from, to] of ranges) {
      if (to > this.#messages.length) return undefined;
      for (let i = from; i < to; i += 1) out.push(this.#messages[i] as BaseMessage);
    }
    return out;
  }

  /**
   * Finds each message of `value` in the pool. A message is the one at a position
   * when it is the very object the pool handed out or took in (LangGraph keeps
   * state messages as they are between steps), or when it encodes to the same
   * stored text as the pool's message of its id or the one after its predecessor's.
   */
  locate(value: readonly BaseMessage[]): Located {
    const fresh: BaseMessage[] = [];
    const positions: number[] = [];
    let previous = -1;
    for (const message of value) {
      let position = this.#find(message, previous);
      if (position === undefined) {
        position = this.#messages.length + fresh.length;
        fresh.push(message);
      }
      positions.push(position);
      previous = position;
    }
    return { ranges: toRanges(positions), fresh };
  }

  #find(message: BaseMessage, previous: number): number | undefined {
    const known = this.#positions.get(message);
    if (known !== undefined && this.#ids[known] === message.id) return known;
    const next = previous + 1;
    if (next < this.#messages.length && this.#same(next, message)) return next;
    const candidates = message.id === undefined ? undefined : this.#byId.get(message.id);
    if (candidates) {
      for (let i = candidates.length - 1; i >= 0; i -= 1) {
        const candidate = candidates[i] as number;
        if (this.#same(candidate, message)) return candidate;
      }
    }
    return undefined;
  }

  #same(position: number, message: BaseMessage): boolean {
    const pooled = this.#messages[position] as BaseMessage;
    if (pooled.id !== message.id) return false;
    return serializeMessage(pooled) === serializeMessage(message);
  }
}

function toRanges(positions: readonly number[]): Ranges {
  const ranges: Ranges = [];
  for (const position of positions) {
    const last = ranges[ranges.length - 1];
    if (last && last[1] === position) last[1] = position + 1;
    else ranges.push([position, position + 1]);
  }
  return ranges;
}

/** True when ranges are well formed: whole numbers, each span non-empty and ordered. */
export function isRanges(value: unknown): value is Ranges {
  return (
    Array.isArray(value) &&
    value.every(
      (span) => Array.isArray(span) && span.length === 2 && Number.isSafeInteger(span[0]) && Number.isSafeInteger(span[1]) && span[0] >= 0 && span[0] < span[1],
    )
  );
}
