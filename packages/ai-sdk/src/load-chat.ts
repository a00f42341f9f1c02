import { type HistoryStore, MemoriaError, type MemoryStrategy, type SessionKey, createSessionKey, memoryContext } from "@memoria/core";
import { type UIMessage, safeValidateUIMessages } from "ai";
import { SNAPSHOT, SNAPSHOT_REACH, type StoredTail, readStoredTail, windowOf } from "./stored-tail.js";
import { assembleUIMessages } from "./ui-assembly.js";

type ValidationOptions<UI extends UIMessage> = Omit<Parameters<typeof safeValidateUIMessages<UI>>[0], "messages">;

export interface LoadChatOptions<UI extends UIMessage = UIMessage> extends ValidationOptions<UI> {
  /**
   * Validate the loaded messages with the AI SDK's `validateUIMessages`. On when
   * `tools`, `metadataSchema` or `dataSchemas` are given (what can go stale as
   * the app changes); without them the messages are what `saveChat` checked and
   * stored, and validating again would only repeat that.
   * @default true when a schema is given
   */
  validate?: boolean;
  /**
   * A stored message that no longer validates (a tool whose schema changed, data
   * the app no longer knows): return it upgraded to keep it, or undefined to
   * leave it out. Either way it is reported in `invalid`; the chat still loads.
   * @default every such message is left out
   */
  onInvalid?: (message: UIMessage, error: Error) => UI | undefined | Promise<UI | undefined>;
  /** Load only the newest `last` messages: the first page a chat shows. @default the whole chat */
  last?: number;
  /** With `last`: the page just before the message with this id (the oldest one shown so far). */
  before?: string;
  /**
   * What the model should get rather than the whole chat: the stored messages a
   * memoria strategy picks (`windowMemory`, `tokenBudgetMemory`, `summaryMemory`,
   * …), as UI messages for `convertToModelMessages`. A summary comes back as a
   * system message. Keep loading the whole chat for the UI and for
   * `originalMessages`: this list is for the model only.
   */
  strategy?: MemoryStrategy;
}

export interface LoadedChat<UI extends UIMessage = UIMessage> {
  messages: UI[];
  /** Stored messages that did not validate: left out, or kept upgraded by `onInvalid`. */
  invalid: { id: string; error: Error; upgraded: boolean }[];
  /** Ids of answers saved cut short (a stopped or failed stream): what had been generated. */
  partial: string[];
  /** With `last`: true when older messages are left (load them with `before`). */
  hasMore: boolean;
}

function pageSize(last: number | undefined): number | undefined {
  if (last === undefined) return undefined;
  if (!Number.isSafeInteger(last) || last < 1) throw new MemoriaError("INVALID_ARGUMENT", `loadChat: "last" must be a whole number >= 1, got ${String(last)}.`);
  return last;
}

/**
 * A chat's UI messages from any memoria store, ready for `useChat`'s `messages` or
 * `toUIMessageStreamResponse`'s `originalMessages`: validated with the AI SDK's own
 * validator against the app's tools, metadata and data schemas, message by
 * message, so one stale message never fails the chat. Messages LangChain wrote to
 * the same session (RunnableWithMessageHistory, an agent) load as UI messages too.
 */
export async function loadChat<UI extends UIMessage = UIMessage>(
  store: HistoryStore,
  key: SessionKey | Record<string, string>,
  options: LoadChatOptions<UI> = {},
): Promise<LoadedChat<UI>> {
  const sessionKey = createSessionKey(key);
  const last = pageSize(options.last);
  if (options.before !== undefined && last === undefined)
    throw new MemoriaError("INVALID_ARGUMENT", 'loadChat: "before" pages back from a message and needs "last", the page size.');
  let page: UIMessage[];
  let partial: Set<string>;
  let hasMore = false;
  let snapshot: StoredTail | undefined;
  if (options.strategy) {
    if (typeof options.strategy.load !== "function")
      throw new MemoriaError("INVALID_ARGUMENT", "loadChat: strategy must be a memory strategy (windowMemory, tokenBudgetMemory, …).");
    if (last !== undefined) throw new MemoriaError("INVALID_ARGUMENT", 'loadChat: give either "strategy" or "last", not both.');
    ({ messages: page, partial } = assembleUIMessages(await options.strategy.load(memoryContext(store, sessionKey))));
  } else if (last === undefined) {
    snapshot = await readStoredTail(store, sessionKey, Number.POSITIVE_INFINITY, () => true);
    ({ messages: page, partial } = snapshot);
  } else {
    const { before } = options;
    const endOf = (messages: UIMessage[]) => (before === undefined ? messages.length : messages.findIndex((message) => message.id === before));
    const tail = await readStoredTail(store, sessionKey, last * 4, ({ messages }) => endOf(messages) > last);
    const end = endOf(tail.messages);
    if (end < 0) throw new MemoriaError("INVALID_ARGUMENT", `loadChat: the chat holds no message ${JSON.stringify(before)} to page back from.`);
    page = tail.messages.slice(Math.max(0, end - last), end);
    hasMore = end - last > 0 || !tail.whole;
    partial = tail.partial;
  }
  const { messages, invalid } = await validated(page, options);
  const loaded: LoadedChat<UI> = { messages, invalid, partial: messages.filter((message) => partial.has(message.id)).map((message) => message.id), hasMore };
  // What was read, for saveChat({ loaded }) to plan from without reading again; not enumerable, so never sent to a client.
  if (snapshot) Object.defineProperty(loaded, SNAPSHOT, { value: windowOf(snapshot, SNAPSHOT_REACH) });
  return loaded;
}

/** The whole page validated at once; only when that fails, each message alone, to name and set aside the bad ones. */
async function validated<UI extends UIMessage>(
  page: UIMessage[],
  options: LoadChatOptions<UI>,
): Promise<{ messages: UI[]; invalid: LoadedChat<UI>["invalid"] }> {
  const { onInvalid, last: _last, before: _before, strategy: _strategy, validate, ...schemas } = options;
  const given = schemas.tools !== undefined || schemas.metadataSchema !== undefined || schemas.dataSchemas !== undefined;
  if (page.length === 0 || !(validate ?? given)) return { messages: page as UI[], invalid: [] };
  const all = await safeValidateUIMessages<UI>({ ...schemas, messages: page });
  if (all.success) return { messages: all.data, invalid: [] };
  const messages: UI[] = [];
  const invalid: LoadedChat<UI>["invalid"] = [];
  for (const message of page) {
    const one = await safeValidateUIMessages<UI>({ ...schemas, messages: [message] });
    if (one.success) {
      messages.push(...one.data);
      continue;
    }
    const upgraded = onInvalid ? await onInvalid(message, one.error) : undefined;
    const again = upgraded === undefined ? undefined : await safeValidateUIMessages<UI>({ ...schemas, messages: [upgraded] });
    if (again?.success) messages.push(...again.data);
    invalid.push({ id: message.id, error: one.error, upgraded: again?.success === true });
  }
  return { messages, invalid };
}
