import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import type { BaseMessage } from "@langchain/core/messages";
import {
  type HistoryStore,
  MemoriaError,
  type MemoryLoadContext,
  type MemoryStrategy,
  type RecallHit,
  type RecallIndex,
  type SessionKeyFilter,
  checkScopeFields,
  decodeSessionKey,
  encodeSessionKey,
  scopeKeyOf,
} from "@memoria/core";
import { linesOf, textOfMessages } from "../extraction.js";
import { type MemoryPlacement, checkPlacement, memoryBlock, memoryMessage, quoteLine, quoteMessages } from "../memory-block.js";
import { defaultIndex } from "./default-index.js";
import { type BackgroundErrorHandler, WorkRegistry, reportToConsole } from "./scope-work.js";

export interface RecallMemoryOptions {
  /** Any LangChain embeddings (OpenAIEmbeddings, …; HashingEmbeddings offline). */
  embeddings: EmbeddingsInterface;
  /**
   * Where the vectors live. A store that has its own index (the SQLite store, with
   * sqlite-vec) is used by default; otherwise an exact scan in this process's memory.
   */
  index?: RecallIndex;
  /** The session fields recall searches across: `["userId"]` recalls from every conversation of the user. @default the whole session key */
  scope?: readonly string[];
  /** How many messages to recall. @default 4 */
  k?: number;
  /** Messages shown around each recalled one. @default { before: 1, after: 1 } */
  range?: { before?: number; after?: number };
  /** The current session's last messages are never recalled (the prompt has them already). @default 8 */
  skipRecent?: number;
  /** Hits less similar than this are left out. @default 0.1 */
  minScore?: number;
  /** Vectors indexed longer ago than this are dropped. @default kept */
  retentionMs?: number;
  /** @default console.error */
  onError?: BackgroundErrorHandler;
  /** @default "recall" */
  stateName?: string;
  /** @default 50 */
  batchSize?: number;
  /** Where the memory block goes: a system message, or a user message of its own. @default "system" */
  placement?: MemoryPlacement;
}

export interface RecallMemory extends MemoryStrategy {
  idle(): Promise<void>;
  /** The index used with `store`. */
  indexFor(store: HistoryStore): RecallIndex;
  resume(store: HistoryStore, scope: SessionKeyFilter): Promise<void>;
}

interface Passage {
  session: string;
  from: number;
  to: number;
  at: number;
  score: number;
}

/**
 * Semantic recall across a scope's conversations (Mastra's semantic recall, on
 * memoria's stores): each human and AI message is embedded after its turn is
 * saved (off the turn); a new input finds its `k` nearest messages in the scope,
 * and each is shown with the messages around it, marked with its conversation and
 * date. The index holds vectors only; the text is read from the store.
 */
export function recallMemory(options: RecallMemoryOptions): RecallMemory {
  const fields = checkScopeFields(options.scope, "recallMemory");
  const placement = checkPlacement(options.placement, "recallMemory");
  const k = options.k ?? 4;
  const before = options.range?.before ?? 1;
  const after = options.range?.after ?? 1;
  const skipRecent = options.skipRecent ?? 8;
  const minScore = options.minScore ?? 0.1;
  for (const [name, value] of [["k", k], ["range.before", before], ["range.after", after], ["skipRecent", skipRecent]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new MemoriaError("INVALID_ARGUMENT", `recallMemory: ${name} must be a whole number >= 0, got ${value}.`);
  }
  const indexFor = (store: HistoryStore): RecallIndex => options.index ?? defaultIndex(store);
  const registry = new WorkRegistry<{ indexed: number }>(
    {
      name: options.stateName ?? "recall",
      batchSize: options.batchSize ?? 50,
      async process(batch) {
        const index = indexFor(batch.store);
        const kept = batch.messages.flatMap((message, i) =>
          ["human", "ai"].includes(message.getType()) && textOfMessages([message]).trim() ? [{ position: batch.first + i, text: linesOf([message]) }] : [],
        );
        if (kept.length > 0) {
          const vectors = await options.embeddings.embedDocuments(kept.map((item) => item.text));
          await index.upsert(kept.map((item, n) => ({ scope: batch.scopeId, session: batch.sessionId, position: item.position, at: batch.now, vector: vectors[n] ?? [] })));
        }
        if (options.retentionMs !== undefined) await index.remove({ scope: batch.scopeId, before: batch.now - options.retentionMs });
        return { indexed: (batch.data?.indexed ?? 0) + kept.length };
      },
    },
    fields,
    options.onError ?? reportToConsole,
  );

  function workFor(context: Pick<MemoryLoadContext, "store" | "sessionKey">) {
    const work = registry.for(context.store, "recallMemory");
    const scopeId = encodeSessionKey(scopeKeyOf(work.scopeOf(context.sessionKey)));
    return { work, scopeId, store: context.store as HistoryStore };
  }

  /** A passage: hits close together in one session are shown once, as one run of messages. */
  function passages(hits: RecallHit[]): Passage[] {
    const out: Passage[] = [];
    for (const hit of [...hits].sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : a.position - b.position))) {
      const last = out[out.length - 1];
      const from = Math.max(0, hit.position - before);
      if (last && last.session === hit.session && from <= last.to + 1) last.to = Math.max(last.to, hit.position + after);
      else out.push({ session: hit.session, from, to: hit.position + after, at: hit.at, score: hit.score });
    }
    return out.sort((a, b) => a.at - b.at);
  }

  /** The passage's messages, or nothing if they are gone (erased, edited away). */
  async function excerpt(store: HistoryStore, passage: Passage): Promise<string | undefined> {
    const session = decodeSessionKey(passage.session);
    const total = await store.count(session);
    if (passage.from >= total) return undefined;
    const messages = (await store.read(session, { last: total - passage.from })).slice(0, passage.to - passage.from + 1);
    const where = Object.entries(session)
      .filter(([field]) => !fields?.includes(field))
      .map(([field, value]) => `${field} ${value}`)
      .join(", ");
    return `${quoteLine(`From the conversation ${where || passage.session} on ${new Date(passage.at).toISOString().slice(0, 10)}:`)}\n${quoteMessages(messages)}`;
  }

  return {
    name: `recall(k=${k}, scope=${fields ? fields.join("+") : "session"})`,
    async load(context): Promise<BaseMessage[]> {
      const { scopeId, store } = workFor(context);
      const query = textOfMessages(context.input);
      if (k === 0 || !query.trim()) return [];
      const index = indexFor(store);
      const here = encodeSessionKey(context.sessionKey);
      const found = (await index.search(scopeId, await options.embeddings.embedQuery(query), k + skipRecent)).filter((hit) => hit.score >= minScore);
      // The current session's length is read only when one of its messages was found.
      const recentFrom = found.some((hit) => hit.session === here) ? (await context.count()) - skipRecent : Number.POSITIVE_INFINITY;
      const hits = found.filter((hit) => !(hit.session === here && hit.position >= recentFrom)).slice(0, k);
      const excerpts = (await Promise.all(passages(hits).map((passage) => excerpt(store, passage)))).filter((text): text is string => text !== undefined);
      return excerpts.length ? [memoryMessage(memoryBlock("recall", "Recalled from earlier conversations", excerpts.join("\n\n")), placement)] : [];
    },
    afterSaveUnlocked: true, // it only hands the turn to the background
    async afterSave(context) {
      workFor(context).work.notify(context.sessionKey);
    },
    idle: () => registry.idle(),
    indexFor,
    resume: (store, scope) => registry.for(store, "recallMemory").resume(scope),
  };
}
