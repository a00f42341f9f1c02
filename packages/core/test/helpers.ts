import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore, OpenTurn } from "../src/index.js";

export interface StoreCall {
  method: string;
  args: unknown[];
}

/** Records every call made to a store, to check what the wrapper asks for. */
export function recordingStore(inner: HistoryStore): { store: HistoryStore; calls: StoreCall[] } {
  const calls: StoreCall[] = [];
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || property === "history") return value;
      return (...args: unknown[]) => {
        calls.push({ method: String(property), args });
        return value.apply(target, args);
      };
    },
  });
  return { store, calls };
}

/** `type: content` for each message, to compare histories at a glance. */
export function transcript(messages: readonly BaseMessage[]): string[] {
  return messages.map((m) => `${m.getType()}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** `inner`, with every turn it opens changed by `change` (a save or a release that fails): what the wrapper does with a turn, seen from outside. */
export function withTurns(inner: HistoryStore, change: (turn: OpenTurn) => Partial<OpenTurn>): HistoryStore {
  const openTurn: HistoryStore["openTurn"] = async (key, options) => {
    const turn = await inner.openTurn(key, options);
    return { lock: turn.lock, history: turn.history, save: turn.save, release: turn.release, ...change(turn) };
  };
  return Object.assign(Object.create(inner) as HistoryStore, inner, { openTurn });
}
