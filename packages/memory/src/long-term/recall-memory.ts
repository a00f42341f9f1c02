import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import type { BaseMessage } from "@langchain/core/messages";
import {
  type HistoryStore,
  MemoriaError,
  type MemoryLoadContext,
  type MemoryStrategy,
  type RecallHit,
  type ReadOptions,
  type RecallIndex,
  type SessionKey,
  type SessionKeyFilter,
  decodeSessionKey,
  encodeSessionKey,
  scopeKeyOf,
} from "@memoria/core";
import { checkScopeFields } from "@memoria/core/store-kit";
import { linesOf, textOfMessages } from "../extraction.js";
import { type MemoryPlacement, checkPlacement, memoryBlock, memoryMessage } from "../memory-block.js";
import { sharingReads } from "../shared-reads.js";
import { defaultIndex } from "./default-index.js";
import { embeddingTrust, fuseRankings, liftByNeighbours, recallQuery, recallTerms, sortedFew } from "@memoria/recall";
import { excerptOf } from "./recall-excerpt.js";
import { type BackgroundErrorHandler, WorkRegistry, reportOnce } from "./scope-work.js";

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
  /** Vector hits less similar than this (cosine) are left out. @default 0.1 */
  minScore?: number;
  /**
   * How much each ranking counts when they are fused (weighted reciprocal rank
   * fusion): the index's BM25 ranking of the messages' words, and the embeddings'
   * ranking; 0 leaves one out. Unless given, the vector weight is what the
   * embeddings earn on a small built-in check (`embeddingTrust`: questions whose
   * answers share none of their words, beside decoys that share them), run once at
   * the first search: 1 for embeddings that read meaning, 0 for ones that only
   * match words, which would otherwise pull recall below the words alone (a weak
   * one fused at 1 took recall@5 from 70 % to 31 % in `pnpm bench --only W8`).
   * Embeddings that declare `lexicalOnly` (`HashingEmbeddings`) weigh 0 unchecked.
   * An index with no lexical search (a `VectorStore`'s) is searched by vector
   * whatever the weights. `neighbours`: how much of the better score of a word hit's
   * neighbouring messages (the one before, the one after) lifts it, before fusion (an
   * answer is often the line after the one with the question's words). At 0.5 it finds
   * more in a top 10 and less in a top 5 (`pnpm bench --only W8`), so it is off by default.
   * @default { lexical: 1, vector: what the embeddings earn, neighbours: 0 }
   */
  weights?: { lexical?: number; vector?: number; neighbours?: number };
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

/**
 * How far into a conversation a recalled passage may start and still be read with the
 * whole conversation: reading up to this many messages more costs less than a count,
 * which is a statement or a round trip of its own.
 */
const WHOLE_READ_REACH = 32;

/**
 * The conversation a search starts from: its id, where its recent messages (which the
 * prompt holds already) start, and, in a turn, the turn's own reads of it.
 */
interface Here {
  id: string;
  /** Where the recent messages start; `from`: where the earliest passage found here starts. */
  recentFrom(from: number): Promise<number>;
  reads?: SessionReads;
}

interface SessionReads {
  read(options?: ReadOptions): Promise<BaseMessage[]>;
  count(): Promise<number>;
}

/** A run of messages recall found, with where and when it was said. */
export interface RecalledPassage {
  /** The conversation's key, and the same encoded (as `read_conversation` takes it). */
  session: SessionKey;
  conversation: string;
  /** Positions of the first and last message shown. */
  from: number;
  to: number;
  /** When the found message was indexed (epoch ms). */
  at: number;
  score: number;
  messages: BaseMessage[];
}

/**
 * How deep each ranking is read before its hits are lifted by their neighbours and the
 * rankings fused: one depth for every k up to half of it, since a list read deeper as
 * k grows gives a hit it reaches later a score (or a neighbour) it lacked before, and
 * the best 5 would not be among the best 10.
 */
const LIST_DEPTH = 100;

export interface RecallMemory extends MemoryStrategy {
  idle(): Promise<void>;
  /**
   * The passages of the scope's conversations nearest to `query` (up to `k`, the
   * strategy's by default), oldest first. Messages of `skip.session` from
   * position `skip.from` on are left out (the ones a prompt holds already).
   */
  search(
    store: HistoryStore,
    scope: SessionKeyFilter,
    query: string,
    options?: { k?: number; skip?: { session: SessionKey; from: number } },
  ): Promise<RecalledPassage[]>;
  /** The index used with `store`. */
  indexFor(store: HistoryStore): RecallIndex;
  resume(store: HistoryStore, scope: SessionKeyFilter): Promise<void>;
}

/** Recall's scope data: how many messages it indexed, and where (the index's `home`, where it has one). */
interface RecallProgress {
  indexed: number;
  home?: string;
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
  for (const [name, value] of [
    ["k", k],
    ["range.before", before],
    ["range.after", after],
    ["skipRecent", skipRecent],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new MemoriaError("INVALID_ARGUMENT", `recallMemory: ${name} must be a whole number >= 0, got ${value}.`);
  }
  const weights = {
    lexical: options.weights?.lexical ?? 1,
    vector: options.weights?.vector ?? ((options.embeddings as { lexicalOnly?: boolean }).lexicalOnly ? 0 : undefined),
    neighbours: options.weights?.neighbours ?? 0,
  };
  for (const [name, value] of Object.entries(weights)) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      throw new MemoriaError("INVALID_ARGUMENT", `recallMemory: weights.${name} must be a number >= 0, got ${value}.`);
  }
  const indexFor = (store: HistoryStore): RecallIndex => options.index ?? defaultIndex(store);
  const registry = new WorkRegistry<RecallProgress>(
    {
      name: options.stateName ?? "recall",
      batchSize: options.batchSize ?? 50,
      // Progress made in another index (a database the sessions were copied from) holds nothing here.
      async holds(data, store) {
        const home = await indexFor(store).home?.();
        return home === undefined || data.home === undefined || data.home === home;
      },
      async process(batch) {
        const index = indexFor(batch.store);
        const kept = batch.messages.flatMap((message, i) =>
          ["human", "ai"].includes(message.getType()) && textOfMessages([message]).trim()
            ? [{ position: batch.first + i, text: linesOf([message]), terms: recallTerms(textOfMessages([message])) }]
            : [],
        );
        if (kept.length > 0) {
          const vectors = await options.embeddings.embedDocuments(kept.map((item) => item.text));
          await index.upsert(
            kept.map((item, n) => ({
              scope: batch.scopeId,
              session: batch.sessionId,
              position: item.position,
              at: batch.now,
              vector: vectors[n] ?? [],
              terms: item.terms,
            })),
          );
        }
        if (options.retentionMs !== undefined) await index.remove({ scope: batch.scopeId, before: batch.now - options.retentionMs });
        const home = await index.home?.();
        return { indexed: (batch.data?.indexed ?? 0) + kept.length, ...(home === undefined ? {} : { home }) };
      },
    },
    fields,
    options.onError ?? reportOnce,
  );

  function workFor(context: Pick<MemoryLoadContext, "store" | "sessionKey">) {
    const work = registry.for(context.store, "recallMemory");
    const scopeId = work.scopeIdOf(context.sessionKey);
    return { work, scopeId, store: context.store as HistoryStore };
  }

  /** A passage: hits close together in one session are shown once, as one run of messages. */
  function passages(hits: RecallHit[]): Passage[] {
    const out: Passage[] = [];
    for (const hit of sortedFew([...hits], (a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : a.position - b.position))) {
      const last = out[out.length - 1];
      const from = Math.max(0, hit.position - before);
      if (last && last.session === hit.session && from <= last.to + 1) last.to = Math.max(last.to, hit.position + after);
      else out.push({ session: hit.session, from, to: hit.position + after, at: hit.at, score: hit.score });
    }
    return sortedFew(out, (a, b) => a.at - b.at);
  }

  /**
   * The passages with their messages, those gone (erased, edited away) left out:
   * one read per conversation, from its first passage on, however many passages it
   * holds. A passage that starts within the first `WHOLE_READ_REACH` messages reads
   * the conversation whole; one further in counts first, to know where it is from the end.
   */
  async function withMessages(store: HistoryStore, found: Passage[], here?: Here): Promise<RecalledPassage[]> {
    const firstFrom = new Map<string, number>();
    for (const passage of found) firstFrom.set(passage.session, Math.min(passage.from, firstFrom.get(passage.session) ?? passage.from));
    const read = new Map<string, { session: SessionKey; total: number; from: number; messages: BaseMessage[] }>();
    await Promise.all(
      [...firstFrom].map(async ([encoded, from]) => {
        const session = decodeSessionKey(encoded);
        const reads: SessionReads = (here?.id === encoded && here.reads) || {
          read: (options) => store.read(session, options),
          count: () => store.count(session),
        };
        if (from <= WHOLE_READ_REACH) {
          const messages = await reads.read();
          read.set(encoded, { session, total: messages.length, from: 0, messages });
          return;
        }
        const total = await reads.count();
        read.set(encoded, { session, total, from, messages: from < total ? await reads.read({ last: total - from }) : [] });
      }),
    );
    const shown: RecalledPassage[] = [];
    for (const passage of found) {
      const { session, total, from, messages } = read.get(passage.session) as { session: SessionKey; total: number; from: number; messages: BaseMessage[] };
      if (passage.from >= total) continue;
      const part = messages.slice(passage.from - from, passage.to - from + 1);
      shown.push({
        session,
        conversation: passage.session,
        from: passage.from,
        to: passage.from + part.length - 1,
        at: passage.at,
        score: passage.score,
        messages: part,
      });
    }
    return shown;
  }

  /**
   * The scope's best `depth` hits for `query`: the lexical ranking (where the index
   * has one), each hit lifted by its neighbours, and the vector ranking fused, each
   * asked for {@link LIST_DEPTH} (or twice `depth`, past half of it), so the best 5 are
   * the first 5 of the best 10. Vectors
   * weighted 0 are still searched when words find nothing (a query of stop words
   * only, an index with no lexical search, items indexed before terms were kept).
   */
  async function ranked(index: RecallIndex, scopeId: string, query: string, depth: number): Promise<RecallHit[]> {
    const searchTerms = weights.lexical > 0 ? index.searchTerms?.bind(index) : undefined;
    const terms = searchTerms ? recallQuery(query) : [];
    const listDepth = Math.max(LIST_DEPTH, 2 * depth);
    const byWords = async (n: number) => (searchTerms && terms.length > 0 ? liftByNeighbours(await searchTerms(scopeId, terms, n), weights.neighbours) : []);
    const byVector = async (n: number) => (await index.search(scopeId, await options.embeddings.embedQuery(query), n)).filter((hit) => hit.score >= minScore);
    const vectorWeight = terms.length === 0 ? 0 : (weights.vector ?? (await embeddingTrust(options.embeddings)));
    if (vectorWeight === 0) {
      // Lifted by their neighbours, words are read to one depth whatever k is, so that the neighbours are the same for every k.
      const found = await byWords(weights.neighbours > 0 ? listDepth : depth);
      return found.length > 0 ? found.slice(0, depth) : byVector(depth);
    }
    const [words, vectors] = await Promise.all([byWords(listDepth), byVector(listDepth)]);
    return fuseRankings(
      [
        { hits: vectors, weight: vectorWeight },
        { hits: words, weight: weights.lexical },
      ],
      depth,
    );
  }

  /** The nearest hits in the scope, less those the prompt has (`here`'s recent messages, asked only when a hit is there). */
  async function find(store: HistoryStore, scopeId: string, query: string, want: number, here?: Here): Promise<RecalledPassage[]> {
    if (want === 0 || !query.trim()) return [];
    const found = await ranked(indexFor(store), scopeId, query, want + skipRecent);
    let hereFrom = Number.POSITIVE_INFINITY;
    for (const hit of found) if (hit.session === here?.id) hereFrom = Math.min(hereFrom, Math.max(0, hit.position - before));
    const from = here && hereFrom !== Number.POSITIVE_INFINITY ? await here.recentFrom(hereFrom) : Number.POSITIVE_INFINITY;
    const hits: RecallHit[] = [];
    for (const hit of found) if (hits.length < want && !(hit.session === here?.id && hit.position >= from)) hits.push(hit);
    return withMessages(store, passages(hits), here);
  }

  return {
    name: `recall(k=${k}, scope=${fields ? fields.join("+") : "session"})`,
    async load(context): Promise<BaseMessage[]> {
      const { scopeId, store } = workFor(context);
      // This conversation through the turn's own reads, shared (with the parts that read it too,
      // and within recall): read whole where a passage found in it would be, its length is the count.
      const reads = sharingReads(context);
      const here: Here = {
        id: encodeSessionKey(context.sessionKey),
        recentFrom: async (from) => (from <= WHOLE_READ_REACH ? (await reads.read()).length : await reads.count()) - skipRecent,
        reads,
      };
      const found = await find(store, scopeId, textOfMessages(context.input), k, here);
      if (found.length === 0) return [];
      let body = "";
      for (const passage of found) body += `${body && "\n\n"}${excerptOf(passage, fields)}`;
      return [memoryMessage(memoryBlock("recall", "Recalled from earlier conversations", body), placement)];
    },
    async search(store, scope, query, searchOptions) {
      const want = searchOptions?.k ?? k;
      if (!Number.isSafeInteger(want) || want < 0)
        throw new MemoriaError("INVALID_ARGUMENT", `recallMemory.search: k must be a whole number >= 0, got ${want}.`);
      const skip = searchOptions?.skip;
      return find(store, encodeSessionKey(scopeKeyOf(scope)), query, want, skip && { id: encodeSessionKey(skip.session), recentFrom: async () => skip.from });
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
