import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { type HistoryStore, MemoriaError, type MemoryStrategy, type SessionKey, createSessionKey, memoryContext } from "@memoria/core";
import type { LanguageModelMiddleware } from "ai";

export interface MemoriaMemoryOptions {
  store: HistoryStore;
  /** The conversation the call belongs to; its fields (e.g. `userId`) scope the long-term memory. */
  key: SessionKey | Record<string, string>;
  /** The long-term memory to give the model: `factMemory`, `workingMemory`, `recallMemory`, or any strategy. */
  memory: MemoryStrategy | readonly MemoryStrategy[];
}

type Prompt = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"];

/** Checks and lists the strategies; shared with `chatSaver`'s `memory`. */
export function strategiesOf(memory: MemoryStrategy | readonly MemoryStrategy[] | undefined, where: string): MemoryStrategy[] {
  const list = memory === undefined ? [] : Array.isArray(memory) ? [...(memory as readonly MemoryStrategy[])] : [memory as MemoryStrategy];
  if (list.some((strategy) => typeof strategy?.load !== "function")) {
    throw new MemoriaError("INVALID_ARGUMENT", `${where}: memory must be a memory strategy (factMemory, workingMemory, recallMemory, …) or a list of them.`);
  }
  return list;
}

/** The text of the newest user message: what recall looks for. */
function lastUserText(prompt: Prompt): string {
  const user = prompt.findLast((message) => message.role === "user");
  if (user?.role !== "user") return "";
  return user.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

/**
 * memoria's long-term memory for `generateText` / `streamText`:
 * `wrapLanguageModel({ model, middleware: memoriaMemory({ store, key, memory }) })`.
 * Before the call, the strategies' memory blocks (the user's facts, profile,
 * recalled passages: the same delimited, labelled blocks the LangChain wrapper
 * puts in a prompt) are added after the system prompt, once per request however
 * many steps it takes. The work after the turn (extracting facts, indexing for
 * recall) is scheduled by `chatSaver({ memory })` once the turn is stored.
 */
export function memoriaMemory(options: MemoriaMemoryOptions): LanguageModelMiddleware {
  const strategies = strategiesOf(options.memory, "memoriaMemory");
  if (strategies.length === 0) throw new MemoriaError("INVALID_ARGUMENT", "memoriaMemory: give at least one memory strategy.");
  if (!options.store || typeof options.store.read !== "function")
    throw new MemoriaError("INVALID_ARGUMENT", "memoriaMemory: store must be a memoria HistoryStore.");
  const sessionKey = createSessionKey(options.key);
  // The steps of one request share their input: its memory is loaded once.
  let cached: { input: string; blocks: Promise<BaseMessage[]> } | undefined;
  const load = (input: string) => {
    if (cached?.input !== input) {
      const context = memoryContext(options.store, sessionKey, { input: [new HumanMessage(input)] });
      const blocks = Promise.all(strategies.map((strategy) => strategy.load(context))).then((lists) => lists.flat());
      blocks.catch(() => (cached = undefined));
      cached = { input, blocks };
    }
    return cached.blocks;
  };
  return {
    specificationVersion: "v4",
    transformParams: async ({ params }) => {
      const blocks = await load(lastUserText(params.prompt));
      if (blocks.length === 0) return params;
      const system = blocks.filter((message) => SystemMessage.isInstance(message)).map((message) => message.text);
      const asUser = blocks.filter((message) => !SystemMessage.isInstance(message)).map((message) => message.text);
      const leading = params.prompt.findIndex((message) => message.role !== "system");
      const at = leading < 0 ? params.prompt.length : leading;
      const added: Prompt = [
        ...(system.length ? [{ role: "system" as const, content: system.join("\n\n") }] : []),
        ...asUser.map((text) => ({ role: "user" as const, content: [{ type: "text" as const, text }] })),
      ];
      return { ...params, prompt: [...params.prompt.slice(0, at), ...added, ...params.prompt.slice(at)] };
    },
  };
}
