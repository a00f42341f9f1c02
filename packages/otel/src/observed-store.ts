import { createHash } from "node:crypto";
import { type Attributes, type MeterProvider, SpanKind, SpanStatusCode, type TracerProvider, metrics, trace } from "@opentelemetry/api";
import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore, OpenTurn } from "@memoria/core";

export interface ObserveOptions {
  /** @default the global tracer provider (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /** @default the global meter provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
}

const SCOPE = "@memoria/otel";

/**
 * Each store call as a memory operation of OpenTelemetry's draft GenAI conventions
 * (`gen_ai.operation.name`); a call the conventions have no name for (the turn
 * lock) keeps its own.
 */
const OPERATIONS: Record<string, string> = {
  read: "search_memory",
  count: "search_memory",
  getState: "search_memory",
  getAllState: "search_memory",
  info: "search_memory",
  list: "search_memory",
  recent: "search_memory",
  append: "update_memory",
  setState: "update_memory",
  setStates: "update_memory",
  setInfo: "update_memory",
  replaceTail: "update_memory",
  trim: "update_memory",
  clear: "delete_memory",
  delete: "delete_memory",
  lock: "lock",
  openTurn: "lock",
  /** An open turn's save: what `append` is to a turn. */
  save: "update_memory",
};

/** Calls that take a filter (some of a key's fields) rather than one session's key. */
const BY_FILTER = new Set(["list", "recent", "delete"]);

/**
 * A session key as an id a trace may carry: a hash of its fields and values, the
 * same for the same key in every call and process, naming nobody.
 */
function hashedKey(key: unknown): string | undefined {
  if (typeof key !== "object" || key === null) return undefined;
  const entries = Object.entries(key as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256").update(JSON.stringify(entries)).digest("hex").slice(0, 16);
}

/** What a span may say of a call's arguments (`key`: the session, for a turn's save): counts, field names, a hashed key; never text or ids. */
function argumentAttributes(call: string, args: unknown[], key: unknown): Attributes {
  const first = key;
  if (BY_FILTER.has(call)) {
    const fields = typeof first === "object" && first !== null ? Object.keys(first).sort() : [];
    return { "gen_ai.memory.scope": fields.length === 0 ? "store" : "user", "memoria.filter.fields": fields };
  }
  const attributes: Attributes = { "gen_ai.memory.scope": "conversation" };
  const id = hashedKey(first);
  if (id) attributes["gen_ai.conversation.id"] = id;
  const written = writtenBy(call, args);
  if (written) attributes["memoria.messages.written"] = written.length;
  return attributes;
}

/** The messages a call writes: an append's, a turn's save's. */
function writtenBy(call: string, args: unknown[]): unknown[] | undefined {
  const messages = call === "append" ? args[1] : call === "save" ? args[0] : undefined;
  return Array.isArray(messages) ? messages : undefined;
}

/** The error's type for `error.type`: memoria's code, else the error's name (never its message, which may name a session). */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.name : "unknown";
}

/**
 * `store` with every call traced and measured: a span per call (named by its
 * operation and the store, a child of whatever span is current, as the app's own
 * request span), and two instruments: `memoria.store.duration` (seconds, by call,
 * operation, store and error type) and `memoria.store.messages` (messages read and
 * written). No message text, session id or error message reaches a span or a
 * metric: a session's key is hashed, a filter gives its field names only.
 * Everything else of the store (its name, capabilities, and calls the contract
 * does not know) is the store's own, so the wrapper passes the testkit as the
 * store beneath does.
 */
export function observeStore<S extends HistoryStore>(store: S, options: ObserveOptions = {}): S {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const duration = meter.createHistogram("memoria.store.duration", { unit: "s", description: "How long a memory store call took" });
  const messages = meter.createCounter("memoria.store.messages", { unit: "{message}", description: "Messages read from and written to a memory store" });
  const wrapped = new WeakMap<object, unknown>();

  /**
   * A turn as the store opened it, its save traced too (a span of its own, under the
   * turn's session); its history is the store's, counted as read when first taken
   * (the in-memory store reads it then, or joined to the turn's input).
   */
  function observedTurn(turn: OpenTurn, key: unknown, common: Attributes): OpenTurn {
    const save = traced("save", turn.save as (...args: unknown[]) => unknown, key) as OpenTurn["save"];
    let counted = false;
    const count = (read: number) => {
      if (counted) return;
      counted = true;
      messages.add(read, { ...common, "memoria.direction": "read" });
    };
    const { historyWith } = turn;
    return Object.create(turn, {
      save: { value: save },
      history: {
        get: () => {
          const history = turn.history;
          if (history) count(history.length);
          return history;
        },
      },
      historyWith: {
        value:
          historyWith &&
          ((after: readonly BaseMessage[]) => {
            const joined = historyWith.call(turn, after);
            count(joined.length - after.length);
            return joined;
          }),
      },
    }) as OpenTurn;
  }

  function traced(call: string, method: (...args: unknown[]) => unknown, turnKey?: unknown) {
    const operation = OPERATIONS[call] as string;
    return function (this: unknown, ...args: unknown[]) {
      const key = call === "save" ? turnKey : args[0];
      const common: Attributes = { "gen_ai.operation.name": operation, "gen_ai.memory.store.name": store.name, "memoria.store.call": call };
      const span = tracer.startSpan(`${operation} ${store.name}`, {
        kind: SpanKind.CLIENT,
        attributes: { ...common, ...argumentAttributes(call, args, key) },
      });
      const started = performance.now();
      const end = (error?: unknown) => {
        const outcome: Attributes = { ...common };
        if (error === undefined) span.setStatus({ code: SpanStatusCode.OK });
        else {
          outcome["error.type"] = errorType(error);
          span.setAttribute("error.type", outcome["error.type"] as string);
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome["error.type"] as string });
        }
        duration.record((performance.now() - started) / 1000, outcome);
        span.end();
      };
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        end(error);
        throw error;
      }
      if (!(result instanceof Promise)) {
        end();
        return result;
      }
      return result.then(
        (value) => {
          if (call === "read" && Array.isArray(value)) {
            span.setAttribute("memoria.messages.read", value.length);
            messages.add(value.length, { ...common, "memoria.direction": "read" });
          }
          // Counted once stored: not a failed append, nor a repeat the store recognised by its turn id.
          const written = writtenBy(call, args);
          if (written && (value as { appended?: boolean } | undefined)?.appended !== false) {
            messages.add(written.length, { ...common, "memoria.direction": "written" });
          }
          if (call === "openTurn") {
            const read = Object.getOwnPropertyDescriptor(value, "history")?.value;
            if (Array.isArray(read)) span.setAttribute("memoria.messages.read", read.length);
            end();
            return observedTurn(value as OpenTurn, key, common);
          }
          end();
          return value;
        },
        (error: unknown) => {
          end(error);
          throw error;
        },
      );
    };
  }

  return new Proxy(store, {
    // The store's own getters and methods run on the store itself (a class's private fields need it).
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof property !== "string" || typeof value !== "function" || !(property in OPERATIONS)) return value;
      let method = wrapped.get(value);
      if (!method) {
        method = traced(property, value as (...args: unknown[]) => unknown);
        wrapped.set(value, method);
      }
      return method;
    },
  });
}
