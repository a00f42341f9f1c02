import type { BaseMessage } from "@langchain/core/messages";
import { MemoriaError } from "./errors.js";
import { encodeMessages } from "./message-codec.js";

/**
 * A change to a session's messages, by position (0-based, in `read()` order):
 * - `delete`: removes one message; deleting an AI message that called tools also
 *   removes the tool results that answer those calls;
 * - `replace`: puts `message` in its place; a tool call keeps its result only if
 *   the replacement makes the same calls (and a result answers the same call);
 * - `truncate`: keeps the messages up to and including `after` (−1 keeps none):
 *   "regenerate this answer" truncates after the question.
 */
export type MessageEdit = { op: "delete"; at: number } | { op: "replace"; at: number; message: BaseMessage } | { op: "truncate"; after: number };

/** What a store's `replaceTail` does: the messages from position `from` on become `messages`. */
export interface TailReplacement {
  from: number;
  messages: BaseMessage[];
  /** How many messages the session holds now: the store refuses (`EDIT_CONFLICT`) if that changed. */
  count: number;
}

export class EditConflictError extends MemoriaError {
  constructor(message: string) {
    super("EDIT_CONFLICT", message);
  }
}

type Calling = BaseMessage & { tool_calls?: { id?: string }[]; tool_call_id?: string };

const callIds = (message: BaseMessage) => ((message as Calling).tool_calls ?? []).map((call) => call.id).filter((id): id is string => typeof id === "string");
const answers = (message: BaseMessage) => (message.getType() === "tool" ? (message as Calling).tool_call_id : undefined);

/** Where each tool call is made and answered. */
function toolPairs(messages: readonly BaseMessage[]): { caller: Map<string, number>; results: Map<string, number[]> } {
  const caller = new Map<string, number>();
  const results = new Map<string, number[]>();
  messages.forEach((message, i) => {
    for (const id of callIds(message)) caller.set(id, i);
    const id = answers(message);
    if (id !== undefined) results.set(id, [...(results.get(id) ?? []), i]);
  });
  return { caller, results };
}

function position(name: string, value: unknown, low: number, high: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < low || (value as number) > high) {
    throw new MemoriaError("INVALID_ARGUMENT", `${name} must be a message position from ${low} to ${high}, got ${String(value)}.`);
  }
  return value as number;
}

/**
 * Refuses a cut after `after` that would separate a tool call kept from a result
 * cut off: the prefix `0..after` must hold every result of every call it makes.
 */
export function checkCut(messages: readonly BaseMessage[], after: number): void {
  const { caller, results } = toolPairs(messages);
  for (const [id, at] of caller) {
    const late = (results.get(id) ?? []).find((i) => i > after);
    if (at <= after && late !== undefined) {
      throw new EditConflictError(
        `Cutting after message ${after} would leave tool call ${id} (message ${at}) without its result (message ${late}); cut after ${late}, or before ${at}.`,
      );
    }
  }
}

/** The tail replacement an edit of `messages` comes to; a change that would break a tool call is refused with `EditConflictError`. */
export function planEdit(messages: readonly BaseMessage[], edit: MessageEdit): TailReplacement {
  const count = messages.length;
  const last = count - 1;
  switch (edit?.op) {
    case "delete": {
      const at = position("delete: at", edit.at, 0, last);
      const target = messages[at] as BaseMessage;
      const answered = answers(target);
      const { caller } = toolPairs(messages);
      if (answered !== undefined && caller.has(answered)) {
        throw new EditConflictError(
          `Message ${at} is the result of tool call ${answered} (message ${caller.get(answered)}); delete that message instead, which removes its results too.`,
        );
      }
      const calls = new Set(callIds(target));
      const rest = messages.slice(at + 1).filter((message) => !calls.has(answers(message) as string));
      return { from: at, messages: rest, count };
    }
    case "replace": {
      const at = position("replace: at", edit.at, 0, last);
      encodeMessages([edit.message]); // refuses what cannot be stored, before anything is written
      const before = messages[at] as BaseMessage;
      const same = (a: string[], b: string[]) => a.length === b.length && a.every((id) => b.includes(id));
      if ((callIds(before).length > 0 || callIds(edit.message).length > 0) && !same(callIds(before), callIds(edit.message)) && at !== last) {
        throw new EditConflictError(
          `Message ${at} makes tool calls [${callIds(before).join(", ")}]; its replacement must make the same calls (it makes [${callIds(edit.message).join(", ")}]), or their results would be left without a call.`,
        );
      }
      if (answers(before) !== answers(edit.message) && (answers(before) !== undefined || answers(edit.message) !== undefined)) {
        throw new EditConflictError(`Message ${at} answers tool call ${answers(before) ?? "(none)"}; its replacement must answer the same call.`);
      }
      return { from: at, messages: [edit.message, ...messages.slice(at + 1)], count };
    }
    case "truncate": {
      const after = position("truncate: after", edit.after, -1, last);
      checkCut(messages, after);
      return { from: after + 1, messages: [], count };
    }
    default:
      throw new MemoriaError("INVALID_ARGUMENT", 'An edit is { op: "delete", at }, { op: "replace", at, message } or { op: "truncate", after }.');
  }
}

/** Checks a tail replacement given to a store's `replaceTail`. */
export function checkTail(tail: TailReplacement): void {
  if (
    !Number.isSafeInteger(tail?.count) ||
    tail.count < 0 ||
    !Number.isSafeInteger(tail.from) ||
    tail.from < 0 ||
    tail.from > tail.count ||
    !Array.isArray(tail.messages)
  ) {
    throw new MemoriaError("INVALID_ARGUMENT", "replaceTail takes { from, messages, count } with 0 <= from <= count.");
  }
}

/** The store found another number of messages than the edit was planned on. */
export function changedUnderEdit(found: number, expected: number): EditConflictError {
  return new EditConflictError(
    `The session holds ${found} messages, not the ${expected} the edit was planned on: it changed meanwhile; read it again and retry.`,
  );
}
