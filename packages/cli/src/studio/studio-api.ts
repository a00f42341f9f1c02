import type { BaseMessage } from "@langchain/core/messages";
import {
  type HistoryStore,
  type JsonValue,
  MemoriaError,
  type SessionKey,
  branchSession,
  decodeSessionKey,
  editSession,
  encodeMessage,
  encodeSessionKey,
  memoryContext,
  type PromptRecord,
  promptRecordName,
  promptRecords,
  scopeKeyOf,
} from "@memoria/core";
import { countTextTokens, readOnlyMemory, tokenBufferMemory, windowMemory } from "@memoria/memory";
import { forgetFact } from "@memoria/memory/long-term";
import { budgetKeyOf, liveSpend } from "@memoria/memory";
import { headerLine, snapshotLines } from "../export-format.js";
import { readSnapshot } from "../snapshot.js";

export interface ApiResult {
  status: number;
  body: unknown;
  /** Set for a body that is not JSON (an export). */
  type?: string;
  headers?: Record<string, string>;
}

const PAGE = 100;

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function keyParam(params: URLSearchParams | Record<string, unknown>, name = "key"): SessionKey {
  const text = params instanceof URLSearchParams ? params.get(name) : params[name];
  if (typeof text !== "string" || text === "") throw new ApiError(400, `"${name}" names no session`);
  try {
    return decodeSessionKey(text);
  } catch (error) {
    throw new ApiError(400, (error as Error).message);
  }
}

function number(params: URLSearchParams, name: string, fallback: number): number {
  const text = params.get(name);
  const n = text === null ? fallback : Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new ApiError(400, `"${name}" must be a whole number`);
  return n;
}

/** A message as the page shows it: its position and its fields, as stored. */
const shown = (message: Parameters<typeof encodeMessage>[0], position: number) => ({ position, ...encodeMessage(message, position) });

/**
 * The studio's JSON API over one store. Reads are always on; what changes or
 * copies data answers 403 unless the studio was started with `--write`.
 */
export function studioApi(store: HistoryStore, settings: { label: string; write: boolean }) {
  const routes: Record<string, (params: URLSearchParams, body: Record<string, unknown>) => Promise<ApiResult>> = {
    "GET about": async () => ({ status: 200, body: { label: settings.label, store: store.name, write: settings.write } }),

    /** Conversations, newest activity first, filtered by user and by text in the title or key. */
    "GET sessions": async (params) => {
      const user = params.get("user") || undefined;
      const text = (params.get("q") ?? "").toLowerCase();
      let cursor = params.get("cursor") || undefined;
      const found: unknown[] = [];
      for (let pages = 0; found.length < 50 && pages < 20; pages++) {
        const page = store.recent ? await store.recent(user ? { userId: user } : {}, { limit: 200, cursor }) : { sessions: [], cursor: undefined };
        for (const info of page.sessions) {
          const id = encodeSessionKey(info.key);
          if (!text || `${info.title ?? ""} ${id}`.toLowerCase().includes(text)) found.push({ ...info, id });
        }
        cursor = page.cursor;
        if (!cursor) break;
      }
      return { status: 200, body: { sessions: found, cursor } };
    },

    /** One page of a transcript, from the end: `before` is the position the page ends at. */
    "GET transcript": async (params) => {
      const key = keyParam(params);
      const [count, info] = await Promise.all([store.count(key), store.info(key)]);
      const before = Math.min(number(params, "before", count), count);
      const from = Math.max(0, before - PAGE);
      const tail = await store.read(key, { last: count - from });
      const messages = tail.slice(0, before - from).map((message, i) => shown(message, from + i));
      return { status: 200, body: { key, info, count, from, messages } };
    },

    "GET state": async (params) => {
      const key = keyParam(params);
      const [state, info] = await Promise.all([store.getAllState(key), store.info(key)]);
      return { status: 200, body: { key, info, state } };
    },

    /**
     * The turns of the transcript's newest page (see `recordPrompts`): where each
     * starts, what was said, and whether its prompt was recorded.
     */
    "GET prompts": async (params) => {
      const key = keyParam(params);
      const [count, records] = await Promise.all([store.count(key), promptRecords(store, key)]);
      const from = Math.max(0, count - PAGE);
      const page = await store.read(key, { last: count - from });
      const recorded = new Set(records.map((record) => record.turn).filter((turn) => turn >= from));
      const starts = new Set([...recorded, ...page.flatMap((message, i) => (message.getType() === "human" ? [from + i] : []))]);
      const turns = [...starts]
        .sort((a, b) => a - b)
        .slice(-50)
        .map((at) => ({ at, said: page[at - from]?.text.slice(0, 80) ?? "", recorded: recorded.has(at) }));
      return { status: 200, body: { key, count, turns, door: doorOf(key, page) } };
    },

    /** One turn's prompt record, with the stored messages it points at (read from the first of them on, not the whole session). */
    "GET prompt": async (params) => {
      const key = keyParam(params);
      const turn = number(params, "turn", 0);
      const record = (await store.getState(key, promptRecordName(turn))) as PromptRecord | undefined;
      if (!record) throw new ApiError(404, `turn ${turn} has no prompt record`);
      const starts = record.calls.flatMap((call) => call.parts.flatMap((part) => ("stored" in part ? [part.stored[0]] : [])));
      const count = await store.count(key);
      const from = Math.min(count, ...starts);
      const tail = starts.length ? await store.read(key, { last: count - from }) : [];
      return { status: 200, body: { record, from, messages: tail.map((message, i) => shown(message, from + i)) } };
    },

    /** What a strategy would give the model for the session's next turn, with token counts. */
    "GET preview": async (params) => {
      const key = keyParam(params);
      const strategy = params.get("strategy") ?? "buffer";
      const k = number(params, "k", 3);
      const maxTokens = number(params, "maxTokens", 1_000);
      const inner =
        strategy === "window"
          ? windowMemory({ k })
          : strategy === "tokens"
            ? tokenBufferMemory({ maxTokens })
            : { name: "buffer", load: ({ read }: { read: () => Promise<never[]> }) => read() };
      const memory = readOnlyMemory(inner as Parameters<typeof readOnlyMemory>[0]);
      const loaded = await memory.load(memoryContext(store, key));
      const count = await store.count(key);
      const tokensOf = (message: (typeof loaded)[number]) => {
        const calls = (message as { tool_calls?: unknown[] }).tool_calls;
        const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
        return countTextTokens(calls?.length ? `${content}${JSON.stringify(calls)}` : content);
      };
      const messages = loaded.map((message, i) => ({ ...shown(message, count - loaded.length + i), tokens: tokensOf(message) }));
      const state = await store.getAllState(key);
      const summaries = Object.entries(state)
        .filter(([, value]) => typeof (value as { summary?: unknown })?.summary === "string")
        .map(([name, value]) => ({ name, summary: (value as { summary: string }).summary }));
      return { status: 200, body: { strategy, messages, tokens: messages.reduce((sum, m) => sum + m.tokens, 0), of: count, summaries } };
    },

    /**
     * A user's long-term memory: the facts of their scope record (holding and held,
     * with dates and the message each came from), and every other value kept there
     * (the profile, progress marks), as stored.
     */
    "GET memory": async (params) => {
      const user = params.get("user");
      if (!user) throw new ApiError(400, '"user" is needed');
      const [state, budget] = await Promise.all([store.getAllState(scopeKeyOf({ userId: user })), liveSpend(store, budgetKeyOf({ userId: user }))]);
      // Long-term memory keeps `{ cursors, data }` per kind (ScopeWork): the data is what it remembers.
      const values = Object.fromEntries(Object.entries(state).map(([name, value]) => [name, (value as { data?: JsonValue } | null)?.data ?? value]));
      const { facts: factData, ...rest } = values;
      const facts = (factData as { facts?: JsonValue[] } | undefined)?.facts ?? [];
      // What a memory budget per user counted in its current period (memoryBudget({ scope: ["userId"] })), if one is kept.
      return { status: 200, body: { user, facts, state: rest, budget: budget ?? null } };
    },

    "GET erase-preview": async (params) => {
      const user = params.get("user");
      if (!user) throw new ApiError(400, '"user" is needed');
      const sessions = (await store.recent({ userId: user }, { limit: 1_000 })).sessions;
      return { status: 200, body: { user, sessions: sessions.length, messages: sessions.reduce((sum, s) => sum + s.messageCount, 0) } };
    },

    "GET export": async (params) => {
      if (!settings.write) throw new ApiError(403, "export is off: start the studio with --write");
      const key = keyParam(params);
      const lines = [headerLine(), ...snapshotLines(await readSnapshot(store, key))];
      return {
        status: 200,
        body: `${lines.join("\n")}\n`,
        type: "application/x-ndjson",
        headers: { "content-disposition": `attachment; filename="${encodeSessionKey(key).replace(/[^A-Za-z0-9_.=&-]/g, "_")}.jsonl"` },
      };
    },

    "POST delete-message": async (_params, body) => {
      const key = keyParam(body);
      const at = body.at;
      if (typeof at !== "number") throw new ApiError(400, '"at" is the position to delete');
      return { status: 200, body: await editSession(store, key, { op: "delete", at }) };
    },

    "POST branch": async (_params, body) => {
      const from = keyParam(body);
      const to = keyParam(body, "to");
      const messages = typeof body.messages === "number" ? body.messages : undefined;
      return { status: 200, body: await branchSession(store, from, to, { messages }) };
    },

    /** Withdraws a fact of a user's long-term memory: closed and kept for audit, never given to a model again (as the `forget` tool does). */
    "POST withdraw-fact": async (_params, body) => {
      if (typeof body.user !== "string" || body.user === "") throw new ApiError(400, '"user" is needed');
      if (typeof body.id !== "string") throw new ApiError(400, '"id" is the fact to withdraw');
      const fact = await forgetFact(store, { userId: body.user }, body.id, "withdraw");
      if (!fact) throw new ApiError(404, `${body.user} has no fact ${body.id}`);
      return { status: 200, body: { withdrawn: body.id } };
    },

    "POST erase": async (_params, body) => {
      if (typeof body.user !== "string" || body.user === "") throw new ApiError(400, '"user" is needed');
      return { status: 200, body: { erased: await store.delete({ userId: body.user }) } };
    },
  };

  return async (method: string, path: string, params: URLSearchParams, body: unknown): Promise<ApiResult> => {
    const route = routes[`${method} ${path}`];
    if (!route) return { status: 404, body: { error: `no ${method} /api/${path}` } };
    if (method === "POST" && !settings.write) return { status: 403, body: { error: "this studio was started without --write: it only reads" } };
    try {
      return await route(params, (body ?? {}) as Record<string, JsonValue>);
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, body: { error: error.message } };
      if (MemoriaError.isInstance(error)) {
        const status = error.code.startsWith("INVALID") ? 400 : error.code === "EDIT_CONFLICT" ? 409 : 500;
        return { status, body: { error: error.message, code: error.code } };
      }
      throw error;
    }
  };
}

/**
 * Which door most likely stored a conversation, so the studio names the option that
 * records prompts there: a LangGraph thread (its key holds `threadId`), an AI SDK
 * chat (a message carries its UI message record), else a LangChain chain.
 */
function doorOf(key: SessionKey, page: readonly BaseMessage[]): "langgraph" | "ai-sdk" | "chain" {
  if (key.threadId !== undefined) return "langgraph";
  if (page.some((message) => (message.additional_kwargs as Record<string, unknown> | undefined)?.ui_message !== undefined)) return "ai-sdk";
  return "chain";
}
