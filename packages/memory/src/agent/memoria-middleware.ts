import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  type HistoryStore,
  MemoriaError,
  type MemoryStrategy,
  type SessionKey,
  createSessionKey,
  encodeSessionKey,
  memoryContext,
  recordModelCall,
} from "@memoria/core";
import { type AgentMiddleware, createMiddleware } from "langchain";
import { THREAD_FIELD, callFields } from "../call-fields.js";
import { type ToolCompactionOptions, compactToolResults } from "../tool-result-compaction.js";

export interface MemoriaMiddlewareOptions {
  store: HistoryStore;
  /**
   * The long-term memory to inject before each model call: `factMemory`,
   * `workingMemory`, `recallMemory` (or any strategy). The agent's own messages
   * come from its state, so a strategy that loads the conversation itself
   * (a window, a buffer) has no place here.
   */
  memory?: MemoryStrategy | readonly MemoryStrategy[];
  /**
   * The `configurable` (or `context`) fields that, with the thread id, name the
   * conversation in the store: `MemoriaSaver`'s `keyFields`, e.g. `["userId"]`.
   * @default []
   */
  keyFields?: readonly string[];
  /**
   * Append the agent's new messages to the memoria session after each run, so
   * the long-term work can read them. Leave it off with a `MemoriaSaver` on the
   * same store: that already keeps the thread's messages there.
   * @default false
   */
  saveMessages?: boolean;
  /**
   * Past `maxTokens`, the oldest tool results in what the model is given are
   * replaced by stubs naming the call and where to read it; the agent's state
   * and the store keep every original.
   */
  compaction?: ToolCompactionOptions;
  /**
   * Keep what each model call was given (the system message with its memory
   * blocks, the messages, by position where the thread stores them), the model's
   * name and its token counts, as the turn's prompt record: what `memoria studio`
   * shows under "What the model saw". Stored in the thread's session, so it is
   * encrypted and erased with it.
   * @default false
   */
  recordPrompts?: boolean;
}

/**
 * memoria's long-term memory for `createAgent`: before each model call, the
 * memory blocks of the given strategies (the same delimited, labelled blocks the
 * wrapper puts in a prompt), merged into the system message or, for strategies
 * placed as a user message, put before the conversation; after the agent's run,
 * the strategies' off-turn work is scheduled, durably (progress in the scope
 * record, caught up by the next run or `resume` after a crash).
 */
export function memoriaMiddleware(options: MemoriaMiddlewareOptions): AgentMiddleware {
  const strategies =
    options.memory === undefined ? [] : Array.isArray(options.memory) ? [...(options.memory as readonly MemoryStrategy[])] : [options.memory as MemoryStrategy];
  if (!options.store || typeof options.store.read !== "function")
    throw new MemoriaError("INVALID_ARGUMENT", "memoriaMiddleware: store must be a memoria HistoryStore.");
  if ((strategies.length === 0 && !options.compaction && !options.recordPrompts) || strategies.some((strategy) => typeof strategy?.load !== "function")) {
    throw new MemoriaError(
      "INVALID_ARGUMENT",
      "memoriaMiddleware: memory must be a memory strategy (factMemory, workingMemory, recallMemory, …) or a list of them, unless only compaction or recordPrompts is wanted.",
    );
  }
  const keyFields = options.keyFields ?? [];
  const store = options.store;
  /** One load per run's input: an agent calls its model several times a run. */
  const loaded = new WeakMap<BaseMessage, Promise<BaseMessage[]>>();
  /** The run each input belongs to, for the prompt records: the calls of one run make one record. */
  const runs = new WeakMap<BaseMessage, string>();

  function sessionOf(config: RunnableConfig): SessionKey {
    const given = callFields(config);
    const fields: Record<string, unknown> = { [THREAD_FIELD]: given[THREAD_FIELD] };
    for (const field of keyFields) fields[field] = given[field];
    if (fields[THREAD_FIELD] === undefined) {
      throw new MemoriaError("INVALID_SESSION_KEY", 'memoriaMiddleware needs the run\'s thread: agent.invoke(input, { configurable: { thread_id: "t1" } }).');
    }
    return createSessionKey(fields);
  }

  async function load(config: RunnableConfig, input: BaseMessage): Promise<BaseMessage[]> {
    const context = memoryContext(store, sessionOf(config), { input: [input], config });
    return (await Promise.all(strategies.map((strategy) => strategy.load(context)))).flat();
  }

  return createMiddleware({
    name: "MemoriaMemory",
    wrapModelCall: async (request, handler) => {
      const config = configOf(request.runtime);
      if (options.compaction) {
        const conversation = encodeSessionKey(sessionOf(config));
        request = { ...request, messages: await compactToolResults(request.messages, options.compaction, { conversation, first: 0 }) };
      }
      const input = request.messages.findLast((message) => HumanMessage.isInstance(message));
      if (input && strategies.length > 0) {
        let memory = loaded.get(input);
        if (!memory) {
          memory = load(config, input);
          loaded.set(input, memory);
          memory.catch(() => loaded.delete(input));
        }
        const blocks = await memory;
        const system = blocks.filter((message) => SystemMessage.isInstance(message)).map((message) => message.text);
        const others = blocks.filter((message) => !SystemMessage.isInstance(message));
        if (blocks.length > 0) {
          request = {
            ...request,
            systemMessage: system.length
              ? request.systemMessage.concat(`${request.systemMessage.text ? "\n\n" : ""}${system.join("\n\n")}`)
              : request.systemMessage,
            messages: [...others, ...request.messages],
          };
        }
      }
      if (!options.recordPrompts) return handler(request);
      const response = await handler(request);
      const run = (input && runs.get(input)) ?? randomUUID();
      if (input) runs.set(input, run);
      const given = request.systemMessage.text ? [request.systemMessage, ...request.messages] : request.messages;
      const usage = AIMessage.isInstance(response) ? response.usage_metadata : undefined;
      const model = (request.model as { model?: unknown; modelName?: unknown }).model ?? (request.model as { modelName?: unknown }).modelName;
      await recordModelCall(store, sessionOf(config), {
        run,
        messages: given.map((message) => ({ type: message.getType(), text: message.text })),
        ...(typeof model === "string" ? { model } : {}),
        ...(usage ? { usage: { input: usage.input_tokens, output: usage.output_tokens } } : {}),
      });
      return response;
    },
    afterAgent: async (state, runtime) => {
      const config = configOf(runtime);
      const sessionKey = sessionOf(config);
      const messages = (state as { messages?: BaseMessage[] }).messages ?? [];
      let added: BaseMessage[] = [];
      if (options.saveMessages) {
        const stored = await store.count(sessionKey);
        added = messages.slice(stored);
        // The run's last message id names the turn: a retried run stores it once.
        const last = added.at(-1)?.id;
        if (added.length > 0) await store.append(sessionKey, added, last ? { turnId: `agent:${last}`.slice(0, 128) } : undefined);
      }
      const input = messages.findLast((message) => HumanMessage.isInstance(message));
      const context = { ...memoryContext(store, sessionKey, { input: input ? [input] : [], config }), added };
      for (const strategy of strategies) await strategy.afterSave?.(context);
      return undefined;
    },
  });
}

/** The run's config as a middleware hook sees it (LangGraph's runtime carries `configurable` and `context`). */
function configOf(runtime: unknown): RunnableConfig {
  const { configurable, context } = (runtime ?? {}) as { configurable?: Record<string, unknown>; context?: unknown };
  return { configurable: configurable ?? {}, ...(context !== undefined ? { context } : {}) } as RunnableConfig;
}
