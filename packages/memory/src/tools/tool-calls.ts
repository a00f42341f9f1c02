import type { RunnableConfig } from "@langchain/core/runnables";
import {
  type AccessAction,
  type Authorize,
  type HistoryStore,
  MemoriaError,
  type SessionKey,
  type SessionKeyFilter,
  checkAccess,
  decodeSessionKey,
  encodeSessionKey,
  isScopeKey,
  scopeKeyOf,
  sessionKeyFromConfig,
} from "@memoria/core";
import { checkScopeFields } from "@memoria/core/store-kit";
import { THREAD_FIELD, callFields } from "../call-fields.js";
import { FACTS_STATE, forgetFact, readFacts, rememberFact } from "../long-term/fact-edits.js";
import { holds, shownToModel } from "../long-term/facts.js";
import { PROFILE_STATE, updateProfile } from "../long-term/profile-edits.js";
import type { RecallMemory } from "../long-term/recall-memory.js";
import { conversationPage, factLine, profileAnswer, rankFacts, searchAnswer } from "./tool-text.js";
import { MEMORY_TOOL_NAMES, type MemoryToolInput, type MemoryToolName } from "./tool-specs.js";

/** Fields a conversation is commonly named by, besides the scope's; the first one the config holds names the call's conversation. */
const CONVERSATION_FIELDS = ["conversationId", "sessionId", THREAD_FIELD];

export interface MemoryToolsOptions {
  store: HistoryStore;
  /**
   * The session fields the memory belongs to, read from each call's config
   * (`configurable`, or LangGraph's `context`), never from the model's arguments:
   * `["userId"]` gives each user their own memory.
   */
  scope: readonly string[];
  /**
   * The fields naming the conversation a call is made in (where a remembered fact
   * came from; recall leaves it out, as the prompt has it).
   * @default the scope's fields and the first of conversationId, sessionId, thread_id the config holds (a thread as `MemoriaSaver` keys it, `threadId`)
   */
  conversation?: readonly string[];
  /** Recalled passages for `search_memory` (the `recallMemory` the app uses, for its index and embeddings). */
  recall?: RecallMemory;
  /** What `forget` does: close the fact and keep it for audit, or remove it. @default "withdraw" */
  forget?: "withdraw" | "erase";
  /** Asked before every read or write (as `RunnableWithMessageHistory`'s); a store made by `guardStore` is also checked as the caller. */
  authorize?: Authorize;
  /** Which tools to give. @default all five */
  tools?: readonly MemoryToolName[];
  /** State names, when the strategies were given other ones. @default { facts: "facts", profile: "profile" } */
  stateNames?: { facts?: string; profile?: string };
}

/** An error the model caused and can fix (an unknown fact id, another user's conversation): answered as its tool result. */
export class ToolArgumentError extends MemoriaError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
  }
}

/** One tool call, bound to the scope and conversation its config names. */
export interface MemoryCall {
  store: HistoryStore;
  scope: SessionKeyFilter;
  conversation: SessionKey | undefined;
  config: RunnableConfig | undefined;
}

type Bodies = { [N in MemoryToolName]: (input: MemoryToolInput<N>, call: MemoryCall) => Promise<string> };

/** Runs the memory tools for any caller (LangChain tools, the MCP server): checks the options once, then answers calls. */
export class MemoryToolRunner {
  readonly names: readonly MemoryToolName[];
  readonly #options: MemoryToolsOptions;
  readonly #fields: readonly string[];
  readonly #bodies: Bodies;

  constructor(options: MemoryToolsOptions) {
    const fields = checkScopeFields(options?.scope, "memoryTools");
    if (fields === undefined) throw new MemoriaError("INVALID_ARGUMENT", 'memoryTools: scope must name the fields the memory belongs to, e.g. ["userId"].');
    if (!options.store || typeof options.store.getState !== "function")
      throw new MemoriaError("INVALID_ARGUMENT", "memoryTools: store must be a memoria HistoryStore.");
    if (options.forget !== undefined && options.forget !== "withdraw" && options.forget !== "erase") {
      throw new MemoriaError("INVALID_ARGUMENT", `memoryTools: forget must be "withdraw" or "erase", got ${JSON.stringify(options.forget)}.`);
    }
    const unknown = (options.tools ?? []).filter((name) => !MEMORY_TOOL_NAMES.includes(name));
    if (unknown.length > 0)
      throw new MemoriaError("INVALID_ARGUMENT", `memoryTools: unknown tools ${unknown.join(", ")}; the tools are ${MEMORY_TOOL_NAMES.join(", ")}.`);
    this.#options = options;
    this.#fields = fields;
    this.names = options.tools ?? MEMORY_TOOL_NAMES;
    this.#bodies = bodies(options);
  }

  /**
   * The call a config makes: the scope from its `configurable` (or `context`),
   * and a `guardStore` store checked as that caller. A config without the scope's
   * fields is the app's mistake: an `InvalidSessionKeyError`.
   */
  bind(config: RunnableConfig | undefined): MemoryCall {
    const given = callFields(config);
    const scope = sessionKeyFromConfig(given, this.#fields);
    const fields = this.#options.conversation ?? [...this.#fields, ...CONVERSATION_FIELDS.filter((field) => typeof given[field] === "string").slice(0, 1)];
    // A call names its conversation when the config holds every field of it, and it is more than the scope.
    const named = fields.some((field) => !this.#fields.includes(field)) && fields.every((field) => typeof given[field] === "string");
    const guarded = this.#options.store as HistoryStore & { as?: (config: RunnableConfig) => HistoryStore };
    const store = typeof guarded.as === "function" && config ? guarded.as(config) : this.#options.store;
    return { store, scope, conversation: named ? sessionKeyFromConfig(given, fields) : undefined, config };
  }

  /** Runs a tool: its answer, or for an argument the model can fix, `{ error }`; other failures (a dead store, a denial) throw. */
  async run<N extends MemoryToolName>(name: N, input: MemoryToolInput<N>, call: MemoryCall): Promise<{ text: string; error?: true }> {
    if (!this.names.includes(name)) throw new MemoriaError("INVALID_ARGUMENT", `memoryTools: no tool "${name}" is given.`);
    try {
      return { text: await this.#bodies[name](input, call) };
    } catch (error) {
      // ToolArgumentError, and the edits' own checks (an empty statement, a profile kept as fields).
      if (MemoriaError.hasCode(error, "INVALID_ARGUMENT")) {
        return { text: `Error: ${(error as Error).message}`, error: true };
      }
      throw error;
    }
  }
}

function bodies(options: MemoryToolsOptions): Bodies {
  const factsState = options.stateNames?.facts ?? FACTS_STATE;
  const profileState = options.stateNames?.profile ?? PROFILE_STATE;
  const forgetHow = options.forget ?? "withdraw";
  const check = (call: MemoryCall, key: SessionKey | SessionKeyFilter, action: AccessAction) =>
    checkAccess(options.authorize, { key, action, config: call.config });
  return {
    async search_memory({ query, include_past, limit = 10 }, call) {
      await check(call, scopeKeyOf(call.scope), "read");
      const facts = (await readFacts(call.store, call.scope, factsState)).filter(shownToModel);
      const current = rankFacts(facts.filter(holds), query).slice(0, limit);
      const past = include_past
        ? rankFacts(
            facts.filter((fact) => !holds(fact)),
            query,
          ).slice(0, limit)
        : [];
      const skip = call.conversation && { session: call.conversation, from: 0 };
      const passages = options.recall ? await options.recall.search(call.store, call.scope, query, { k: Math.min(limit, 8), skip }) : [];
      return searchAnswer(current, past, passages);
    },
    async remember({ subject, statement, replaces }, call) {
      await check(call, scopeKeyOf(call.scope), "append");
      const source = call.conversation
        ? { session: encodeSessionKey(call.conversation), message: await call.store.count(call.conversation) }
        : { session: encodeSessionKey(scopeKeyOf(call.scope)), message: 0 };
      return `Remembered:\n${factLine(await rememberFact(call.store, call.scope, { subject, statement, replaces }, source, factsState))}`;
    },
    async update_profile({ field, value }, call) {
      await check(call, scopeKeyOf(call.scope), "append");
      return profileAnswer(await updateProfile(call.store, call.scope, { field, value }, profileState));
    },
    async forget({ id }, call) {
      await check(call, scopeKeyOf(call.scope), forgetHow === "erase" ? "delete" : "append");
      const fact = await forgetFact(call.store, call.scope, id, forgetHow, factsState);
      if (!fact) throw new ToolArgumentError(`No fact "${id}" in memory; search_memory lists the facts with their ids.`);
      return forgetHow === "erase" ? `Erased fact ${id}.` : `Withdrew fact ${id}: it is no longer remembered.`;
    },
    async read_conversation({ conversation, from, limit = 20 }, call) {
      const key = ownConversation(conversation, call.scope);
      await check(call, key, "read");
      const total = await call.store.count(key);
      if (total === 0) throw new ToolArgumentError(`No conversation ${conversation} is stored.`);
      const start = from ?? Math.max(0, total - limit);
      if (start >= total) throw new ToolArgumentError(`Conversation ${conversation} has ${total} messages; from must be below ${total}.`);
      const messages = (await call.store.read(key, { last: total - start })).slice(0, limit);
      return conversationPage(encodeSessionKey(key), start, messages, total);
    },
  };
}

/** The conversation named by the model, if it is one of the scope's (never a scope record, never another user's). */
function ownConversation(name: string, scope: SessionKeyFilter): SessionKey {
  let key: SessionKey;
  try {
    key = decodeSessionKey(name);
  } catch {
    throw new ToolArgumentError(`"${name}" is not a conversation name; use one search_memory gave.`);
  }
  const mine = !isScopeKey(key) && Object.entries(scope).every(([field, value]) => key[field] === value);
  if (!mine) throw new ToolArgumentError(`"${name}" is not one of this user's conversations.`);
  return key;
}
