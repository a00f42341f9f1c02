import { type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import {
  type HistoryStore,
  MemoriaError,
  type MemoryStrategy,
  type SeenMessage,
  type SessionKey,
  createSessionKey,
  memoryContext,
  recordModelCall,
} from "@memoria/core";
import type { LanguageModelMiddleware } from "ai";

export interface MemoriaMemoryOptions {
  store: HistoryStore;
  /** The conversation the call belongs to; its fields (e.g. `userId`) scope the long-term memory. */
  key: SessionKey | Record<string, string>;
  /** The long-term memory to give the model: `factMemory`, `workingMemory`, `recallMemory`, or any strategy. */
  memory?: MemoryStrategy | readonly MemoryStrategy[];
  /**
   * Keep what each model call of the request was given (the system prompt, the
   * memory blocks, the chat's messages by position where `chatSaver` stores them),
   * the model and its token counts, as the turn's prompt record: what `memoria
   * studio` shows under "What the model saw". Stored in the chat's session, so it
   * is encrypted and erased with it.
   * @default false
   */
  recordPrompts?: boolean;
}

type Prompt = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0]["params"]["prompt"];
type StreamPart =
  Awaited<ReturnType<Parameters<NonNullable<LanguageModelMiddleware["wrapStream"]>>[0]["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

/** Checks and lists the strategies; shared with `chatSaver`'s `memory`. */
export function strategiesOf(memory: MemoryStrategy | readonly MemoryStrategy[] | undefined, where: string): MemoryStrategy[] {
  const list = memory === undefined ? [] : Array.isArray(memory) ? [...(memory as readonly MemoryStrategy[])] : [memory as MemoryStrategy];
  if (list.some((strategy) => typeof strategy?.load !== "function")) {
    throw new MemoriaError("INVALID_ARGUMENT", `${where}: memory must be a memory strategy (factMemory, workingMemory, recallMemory, …) or a list of them.`);
  }
  return list;
}

/** A prompt message as LangChain would type it, with its text: what a prompt record matches to stored messages. */
function seen(message: Prompt[number]): SeenMessage {
  if (message.role === "system") return { type: "system", text: message.content };
  const type = message.role === "user" ? "human" : message.role === "assistant" ? "ai" : "tool";
  const text = message.content
    .map((part) => {
      if (part.type === "text") return part.text;
      if (part.type !== "tool-result") return "";
      const output = part.output as { type: string; value?: unknown };
      return output.type === "text" || output.type === "error-text" ? String(output.value) : JSON.stringify(output.value ?? "");
    })
    .join("");
  return { type, text };
}

type ModelUsage = { input: number; output: number };

/** A promise and the function that settles it, first call wins (Node 20 has no `Promise.withResolvers`). */
function settleOnce<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Token counts as a prompt record keeps them, when the provider gave them. */
function usageOf(usage: { inputTokens: { total: number | undefined }; outputTokens: { total: number | undefined } } | undefined): ModelUsage | undefined {
  const input = usage?.inputTokens.total;
  return input === undefined ? undefined : { input, output: usage?.outputTokens.total ?? 0 };
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
  if (strategies.length === 0 && !options.recordPrompts)
    throw new MemoriaError("INVALID_ARGUMENT", "memoriaMemory: give at least one memory strategy, or recordPrompts: true.");
  if (!options.store || typeof options.store.read !== "function")
    throw new MemoriaError("INVALID_ARGUMENT", "memoriaMemory: store must be a memoria HistoryStore.");
  const store = options.store;
  const sessionKey = createSessionKey(options.key);
  // The steps of one request share their input: its memory is loaded once, and its calls make one prompt record.
  let cached: { input: string; blocks: Promise<BaseMessage[]>; run: string } | undefined;
  const load = (input: string) => {
    if (cached?.input !== input) {
      const context = memoryContext(store, sessionKey, { input: [new HumanMessage(input)] });
      const blocks = Promise.all(strategies.map((strategy) => strategy.load(context))).then((lists) => lists.flat());
      blocks.catch(() => (cached = undefined));
      cached = { input, blocks, run: crypto.randomUUID() };
    }
    return cached;
  };
  /** Places the call in its turn's record now, while the store holds the chat as it was before the call; writes it when `usage` settles. */
  const record = (params: { prompt: Prompt }, model: { modelId: string }, usage: PromiseLike<ModelUsage | undefined>) =>
    recordModelCall(store, sessionKey, { run: load(lastUserText(params.prompt)).run, messages: params.prompt.map(seen), model: model.modelId, usage });
  return {
    specificationVersion: "v4",
    ...(options.recordPrompts
      ? {
          wrapGenerate: async ({ doGenerate, params, model }) => {
            const usage = settleOnce<ModelUsage | undefined>();
            const recorded = record(params, model, usage.promise);
            try {
              const result = await doGenerate();
              usage.resolve(usageOf(result.usage));
              return result;
            } finally {
              usage.resolve(undefined);
              await recorded;
            }
          },
          // Written when the stream ends, with the usage its finish part carries (none when it failed or was cancelled).
          wrapStream: async ({ doStream, params, model }) => {
            const usage = settleOnce<ModelUsage | undefined>();
            const recorded = record(params, model, usage.promise);
            const settle = async () => {
              usage.resolve(undefined);
              await recorded;
            };
            let result: Awaited<ReturnType<typeof doStream>>;
            try {
              result = await doStream();
            } catch (error) {
              await settle();
              throw error;
            }
            const reader = result.stream.getReader();
            const stream = new ReadableStream<StreamPart>({
              async pull(controller) {
                let read: Awaited<ReturnType<typeof reader.read>>;
                try {
                  read = await reader.read();
                } catch (error) {
                  await settle();
                  throw error;
                }
                if (read.done) {
                  await settle();
                  controller.close();
                  return;
                }
                if (read.value.type === "finish") usage.resolve(usageOf(read.value.usage));
                controller.enqueue(read.value);
              },
              async cancel(reason) {
                await settle();
                await reader.cancel(reason);
              },
            });
            return { ...result, stream };
          },
        }
      : {}),
    transformParams: async ({ params }) => {
      if (strategies.length === 0) return params;
      const blocks = await load(lastUserText(params.prompt)).blocks;
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
