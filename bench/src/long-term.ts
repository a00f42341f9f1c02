import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EmbeddingsInterface } from "@langchain/core/embeddings";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type MemoryStrategy, type RecallIndex, RunnableWithMessageHistory, decodeSessionKey, encodeSessionKey, scopeKeyOf } from "@memoria/core";
import { bufferMemory, combineMemory } from "@memoria/memory";
import { type ExtractionModel, HashingEmbeddings, exactIndex, factMemory, recallMemory } from "@memoria/memory/long-term";
import { recallQuery, recallTerms } from "@memoria/recall";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { answerMemoryPrompt } from "@memoria/testkit/scripted-model";
import { interleave, median, timed } from "./measure.js";
import { recallSet } from "./recall-set.js";
import type { Settings } from "./workloads.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pause before every timed W8 turn: a person's, shortened. */
export const PAUSE_MS = 20;

/** The scripted memory model, answering after `delayMs` as a hosted model would. */
function scriptedModel(delayMs: number): ExtractionModel {
  return RunnableLambda.from(async (prompt: string) => {
    await sleep(delayMs);
    return answerMemoryPrompt(prompt) ?? "NONE";
  });
}

/** A wrapper around a chat model that answers after `modelMs`. */
function chain(store: ReturnType<typeof createSqliteStore>, memory: MemoryStrategy, modelMs = 0) {
  const model = RunnableLambda.from(async () => {
    if (modelMs > 0) await sleep(modelMs);
    return new AIMessage("Noted.");
  });
  return new RunnableWithMessageHistory({ runnable: model, store, sessionFields: ["userId", "conversationId"], memory });
}

export interface LongTermTurn {
  /** How long the chat model takes to answer. */
  modelMs: number;
  variant: string;
  turn: number;
}

/**
 * A turn on SQLite with buffer memory, against the same turn with fact and recall
 * memory on top (scripted extraction answering after 20 ms, hashing embeddings),
 * with a chat model answering after `modelMs`. Each user already holds 20
 * processed conversations. Between turns the background work is let finish (as a
 * person's pause would), untimed.
 */
export async function longTermTurns(settings: Settings, modelMs: number): Promise<LongTermTurn[]> {
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-lt-"));
  const store = createSqliteStore({ path: join(dir, "history.db") });
  try {
    const embeddings = new HashingEmbeddings();
    const facts = factMemory({ model: scriptedModel(20), scope: ["userId"] });
    const recall = recallMemory({ embeddings, scope: ["userId"] });
    const variants: Record<string, MemoryStrategy & { idle?: () => Promise<void> }> = {
      "buffer memory": bufferMemory(),
      "buffer + facts + recall": combineMemory(facts, recall, bufferMemory()),
    };
    const chains = Object.fromEntries(Object.entries(variants).map(([name, memory]) => [name, chain(store, memory, modelMs)]));
    const users = Object.fromEntries(Object.keys(variants).map((name, i) => [name, `bench-user-${i}`]));
    for (const [name, c] of Object.entries(chains)) {
      for (let n = 0; n < (settings.quick ? 3 : 20); n++) {
        for (const text of [`Bench${n} lives in City${n}.`, `Note ${n}: the meeting moved to room ${n}.`]) {
          await c.invoke([new HumanMessage(text)], { configurable: { userId: users[name], conversationId: `past-${n}` } });
          await variants[name]?.idle?.();
        }
      }
    }
    // Interleaved (each round in a new order) after 3 untimed rounds. Every timed call starts
    // alike, whichever variant ran before it: after every variant's background work is done and a
    // pause (a person's, shortened), so neither is measured on code and caches the other warmed.
    const asked = new Map<string, number>();
    const inputs = new Map<string, HumanMessage[]>();
    const settle = async (name: string) => {
      for (const variant of Object.values(variants)) await variant.idle?.();
      await sleep(PAUSE_MS);
      const n = asked.get(name) ?? 0;
      asked.set(name, n + 1);
      inputs.set(name, [new HumanMessage(`Where is meeting ${n % 20} now?`)]);
    };
    const samples = await interleave(
      Object.fromEntries(
        Object.entries(chains).map(([name, c]) => [
          name,
          () => c.invoke(inputs.get(name) ?? [], { configurable: { userId: users[name], conversationId: "now" } }),
        ]),
      ),
      settings.quick ? settings.runs : 2 * settings.runs,
      3,
      { before: Object.fromEntries(Object.keys(chains).map((name) => [name, () => settle(name)])) },
    );
    for (const variant of Object.values(variants)) await variant.idle?.();
    return Object.entries(samples).map(([variant, times]) => ({ modelMs, variant, turn: median(times) }));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RecallQuality {
  users: number;
  conversations: number;
  questions: number;
  /** Questions whose answer message was among recall's top 5. */
  hits: number;
  changed: number;
  /** Changed facts whose current fact is the newer value (and the older one is closed). */
  changedNewer: number;
}

/** Runs the recall set through fact and recall memory on SQLite; with `model` / `embeddings` given (a real model), through those. */
export async function recallQuality(options: { model?: ExtractionModel; embeddings?: EmbeddingsInterface } = {}): Promise<RecallQuality> {
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-recall-"));
  const store = createSqliteStore({ path: join(dir, "history.db") });
  const embeddings = options.embeddings ?? new HashingEmbeddings();
  const facts = factMemory({ model: options.model ?? scriptedModel(0), scope: ["userId"], onError: (error) => console.error(error) });
  const recall = recallMemory({ embeddings, scope: ["userId"], onError: (error) => console.error(error) });
  const memory = combineMemory(facts, recall, bufferMemory());
  const c = chain(store, memory);
  const set = recallSet();
  const result: RecallQuality = { users: set.length, conversations: 0, questions: 0, hits: 0, changed: 0, changedNewer: 0 };
  try {
    for (const user of set) {
      for (const [n, conversation] of user.conversations.entries()) {
        result.conversations++;
        for (const text of conversation) await c.invoke([new HumanMessage(text)], { configurable: { userId: user.userId, conversationId: `c${n + 1}` } });
        await memory.idle();
      }
      const index: RecallIndex = recall.indexFor(store);
      const scope = encodeSessionKey(scopeKeyOf({ userId: user.userId }));
      for (const q of user.questions) {
        result.questions++;
        const hits = await index.search(scope, await embeddings.embedQuery(q.question), 5);
        const texts = await Promise.all(
          hits.map(async (hit) => {
            const key = decodeSessionKey(hit.session);
            const messages = await store.read(key, { last: (await store.count(key)) - hit.position });
            return String(messages[0]?.content ?? "");
          }),
        );
        if (texts.includes(q.answerIn)) result.hits++;
        if (q.changed) {
          result.changed++;
          const all = await facts.facts(store, { userId: user.userId });
          const now = all.filter((fact) => fact.until === undefined).map((fact) => fact.statement);
          if (now.includes(q.changed.now) && !now.includes(q.changed.before)) result.changedNewer++;
        }
      }
    }
    return result;
  } finally {
    await memory.idle();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RecallQueryTime {
  index: string;
  items: number;
  /** The first two vector queries: the SQL store ranks the first in SQL and loads the scope on the second. */
  first: [number, number];
  /** A vector query (`search`), median of the rest. */
  query: number;
  /** A top 10 by words (`searchTerms`), where the index has it: two common words and a rare one (a note's number). */
  words?: number;
  /** The same for two common words only (each in a quarter of the items), whose postings MaxScore cannot skip. */
  commonWords?: number;
}

/**
 * Top-5 query time over one scope of `items` synthetic notes: the SQLite and
 * PostgreSQL stores' indexes with their default budget for held scopes and with none
 * (every query in SQL), and `exactIndex()`; each ranks by vector, then by words.
 */
export async function recallQueryTime(items: number, runs: number, postgresUrl: string): Promise<RecallQueryTime[]> {
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-vec-"));
  const store = createSqliteStore({ path: join(dir, "history.db") });
  const inSql = createSqliteStore({ path: join(dir, "history.db"), recallCacheBytes: 0 });
  const tablePrefix = `memoria_bench_recall_${items}_`;
  const postgres = createPostgresStore({ connectionString: postgresUrl, tablePrefix });
  const postgresInSql = createPostgresStore({ connectionString: postgresUrl, tablePrefix, recallCacheBytes: 0 });
  try {
    const embeddings = new HashingEmbeddings();
    const sessions = 100;
    await postgres.delete({ userId: "u" }); // a database kept from an earlier run (DATABASE_URL)
    for (const writer of [store, postgres])
      for (let s = 0; s < sessions; s++) await writer.append({ userId: "u", conversationId: `c${s}` }, [new HumanMessage(`conversation ${s}`)]);
    const scope = encodeSessionKey(scopeKeyOf({ userId: "u" }));
    const exact = exactIndex();
    const indexes: [string, RecallIndex][] = [
      ["SQLite store", store.recallIndex()],
      ["SQLite store, recallCacheBytes 0", inSql.recallIndex()],
      ["PostgreSQL store", postgres.recallIndex()],
      ["PostgreSQL store, recallCacheBytes 0", postgresInSql.recallIndex()],
      ["exactIndex()", exact],
    ];
    const words = ["harbour", "invoice", "garden", "violin", "ferry", "thesis", "recipe", "glacier", "lantern", "budget", "orchard", "summit"];
    for (let from = 0; from < items; from += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, items - from) }, (_, i) => {
        const n = from + i;
        const text = `${words[n % 12]} ${words[(n * 7) % 12]} ${words[(n * 5 + 3) % 12]} note ${n % 997}`;
        return {
          scope,
          session: encodeSessionKey({ userId: "u", conversationId: `c${n % sessions}` }),
          position: Math.floor(n / sessions),
          at: 0,
          vector: embeddings.vector(text),
          terms: recallTerms(text),
        };
      });
      // The two stores of each engine share one database: one of them writes.
      for (const index of [store.recallIndex(), postgres.recallIndex(), exact]) await index.upsert(batch);
    }
    const texts = Array.from({ length: runs }, (_, i) => `${words[i % 12]} ${words[(i + 4) % 12]} note ${i}`);
    const queries = texts.map((text) => embeddings.vector(text));
    const first = new Map<string, [number, number]>();
    for (const [name, index] of indexes)
      first.set(name, [await timed(() => index.search(scope, queries[0] as number[], 5)), await timed(() => index.search(scope, queries[0] as number[], 5))]);
    // Interleaved, query by query, so no index is measured while the others' code is cold.
    const byVector = new Map<string, number[]>(indexes.map(([name]) => [name, []]));
    const byWords = new Map<string, number[]>(indexes.map(([name]) => [name, []]));
    const byCommonWords = new Map<string, number[]>(indexes.map(([name]) => [name, []]));
    for (const [i, query] of queries.entries()) {
      for (const [name, index] of indexes) {
        byVector.get(name)?.push(await timed(() => index.search(scope, query, 5)));
        if (!index.searchTerms) continue;
        byWords.get(name)?.push(await timed(() => index.searchTerms!(scope, recallQuery(texts[i] as string), 10)));
        const common = recallQuery(`${words[i % 12]} ${words[(i + 4) % 12]}`);
        byCommonWords.get(name)?.push(await timed(() => index.searchTerms!(scope, common, 10)));
      }
    }
    const out: RecallQueryTime[] = indexes.map(([name]) => {
      const words = byWords.get(name) ?? [];
      return {
        index: name,
        items,
        first: first.get(name) as [number, number],
        query: median(byVector.get(name) ?? []),
        words: words.length ? median(words) : undefined,
        commonWords: words.length ? median(byCommonWords.get(name) ?? []) : undefined,
      };
    });
    return out;
  } finally {
    await postgres.delete({ userId: "u" });
    for (const opened of [store, inSql, postgres, postgresInSql]) await opened.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
