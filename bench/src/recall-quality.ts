import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { HashingEmbeddings, type RecallMemory, exactIndex, recallMemory } from "@memoria/memory/long-term";
import { TermIndex, recallQuery, recallTerms } from "@memoria/recall";
import { createSqliteStore } from "@memoria/sql";
import { stemmer } from "stemmer";
import { eng as englishStopWords } from "stopword";
import { median, timed } from "./measure.js";
import { type SetConversation, recallConversations } from "./recall-conversations.js";
import { heldOutConversations } from "./recall-held-out.js";
import type { QuestionKind } from "./recall-events.js";

/** A way of ranking a conversation's turns for a question: the top `k`, as [session, turn] positions. */
type Ranker = (question: string, k: number) => Promise<[number, number][]>;

export interface RecallScore {
  system: string;
  kind: QuestionKind | "all";
  questions: number;
  /** Mean share of a question's evidence turns found in the top k, by k. */
  recall: Record<number, number>;
  /** Share of questions with at least one evidence turn in the top k, by k. */
  hit: Record<number, number>;
  /** Session level, as peers report it: mean share of a question's evidence sessions among the first k sessions its ranked turns come from, by k. */
  sessions: Record<number, number>;
  /** Median time of one top-10 query. */
  queryMs: number;
}

export const KS = [5, 10, 20] as const;
/** Session-level cut-offs: a conversation of the set holds 24 sessions. */
export const SESSION_KS = [1, 3, 5] as const;

/** Lowercased words, no stemming, no stop words: plain BM25 as it is usually run. */
const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The `stopword` package's English list, and the question words it lacks ("when", "does", …). */
const STOP_WORDS = new Set([...englishStopWords, "what", "when", "where", "who", "whom", "which", "why", "how", "did", "does", "do"]);
/** Words as IR practice tunes BM25: stop words (question words among them) out, the rest Porter-stemmed. */
const stemmedWords = (text: string) => words(text).flatMap((word) => (STOP_WORDS.has(word) ? [] : [stemmer(word)]));

/** BM25 (k1 1.2) over a conversation's turns, in this process: plain (`words`, b 0.75) or tuned (`stemmedWords`, b 0.4). */
function bm25(conversation: SetConversation, terms: (text: string) => string[] = words, b = 0.75): Ranker {
  const docs = conversation.sessions.flatMap((session, s) => session.turns.map((turn, t) => ({ at: [s, t] as [number, number], terms: terms(turn.text) })));
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of new Set(doc.terms)) df.set(term, (df.get(term) ?? 0) + 1);
  const avg = docs.reduce((sum, doc) => sum + doc.terms.length, 0) / docs.length;
  return async (question, k) => {
    const query = new Set(terms(question));
    return docs
      .map((doc) => {
        let score = 0;
        for (const term of query) {
          const tf = doc.terms.filter((t) => t === term).length;
          if (tf === 0) continue;
          const n = df.get(term) ?? 0;
          const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
          score += (idf * tf * 2.2) / (tf + 1.2 * (1 - b + (b * doc.terms.length) / avg));
        }
        return { at: doc.at, score };
      })
      .filter((doc) => doc.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, k)
      .map((doc) => doc.at);
  };
}

/**
 * memoria's lexical ranking with its concept lexicon left out: the same terms and the
 * same in-process BM25 (`TermIndex`), without the `~topic` terms or the query's topic
 * forms. What the lexicon earns is the default's figures less these.
 */
function withoutLexicon(conversation: SetConversation): Ranker {
  const index = new TermIndex<[number, number]>();
  const plain = (terms: string[]) => terms.filter((term) => !term.startsWith("~"));
  for (const [s, session] of conversation.sessions.entries())
    for (const [t, turn] of session.turns.entries()) index.set(`${s}:${t}`, [s, t], plain(recallTerms(turn.text)));
  // Equal scores: the later turn first, as recall's own order has it.
  const later = (a: [number, number], b: [number, number]) => b[0] - a[0] || b[1] - a[1];
  return async (question, k) =>
    index
      .search(
        recallQuery(question).map(({ term }) => term),
        k,
        later,
      )
      .map((hit) => hit.value);
}

/** The offline embeddings alone: cosine similarity of each turn's vector to the question's, an exact scan. */
function vectors(conversation: SetConversation, embeddings: HashingEmbeddings): Ranker {
  const docs = conversation.sessions.flatMap((session, s) =>
    session.turns.map((turn, t) => ({ at: [s, t] as [number, number], vector: embeddings.vector(turn.text) })),
  );
  return async (question, k) => {
    const query = embeddings.vector(question);
    return docs
      .map((doc) => ({ at: doc.at, score: doc.vector.reduce((sum, x, i) => sum + x * (query[i] as number), 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k)
      .map((doc) => doc.at);
  };
}

function score(system: string, kind: QuestionKind | "all", found: { evidence: [number, number][]; top: [number, number][] }[], times: number[]): RecallScore {
  const recall: Record<number, number> = {};
  const hit: Record<number, number> = {};
  for (const k of KS) {
    let shares = 0;
    let hits = 0;
    for (const { evidence, top } of found) {
      const topK = new Set(top.slice(0, k).map(([s, t]) => `${s}:${t}`));
      const inTop = evidence.filter(([s, t]) => topK.has(`${s}:${t}`)).length;
      shares += inTop / evidence.length;
      if (inTop > 0) hits++;
    }
    recall[k] = shares / found.length;
    hit[k] = hits / found.length;
  }
  const sessions: Record<number, number> = {};
  for (const k of SESSION_KS) {
    let shares = 0;
    for (const { evidence, top } of found) {
      const wanted = new Set(evidence.map(([s]) => s));
      const ranked = [...new Set(top.map(([s]) => s))].slice(0, k);
      shares += ranked.filter((s) => wanted.has(s)).length / wanted.size;
    }
    sessions[k] = shares / found.length;
  }
  return { system, kind, questions: found.length, recall, hit, sessions, queryMs: median(times) };
}

/**
 * Recall quality on the generated conversations: memoria's default recall (SQLite
 * store, its own index, offline embeddings, sessions indexed one after another as
 * they would be in use) against plain BM25 and plain vectors over the same turns.
 */
export async function recallQualityScores(options: { conversations?: number; sessions?: number; set?: "tuning" | "held-out" } = {}): Promise<RecallScore[]> {
  const set = (options.set === "held-out" ? heldOutConversations : recallConversations)(options.conversations, options.sessions);
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-recall-quality-"));
  const store = createSqliteStore({ path: join(dir, "history.db") });
  const embeddings = new HashingEmbeddings();
  const recall = recallMemory({ embeddings, scope: ["userId"], range: { before: 0, after: 0 }, onError: (error) => console.error(error) });
  // The same, each word hit lifted by its better neighbour (off by default): its own progress, the same SQL index.
  const lifted = recallMemory({
    embeddings,
    scope: ["userId"],
    range: { before: 0, after: 0 },
    weights: { neighbours: 0.5 },
    stateName: "recall-neighbours",
    onError: (error) => console.error(error),
  });
  // A weak embedding given as a real one (no `lexicalOnly`): words hashed into 32 dimensions (many collide), fused at the
  // weight it earns (recall's trust check) and at the full weight, which shows what that check saves.
  const hashed = new HashingEmbeddings({ dimensions: 32 });
  const weak = { embedDocuments: (texts: string[]) => hashed.embedDocuments(texts), embedQuery: (text: string) => hashed.embedQuery(text) };
  const weakRecall = (stateName: string, weights?: { vector: number }) =>
    recallMemory({
      embeddings: weak,
      index: exactIndex(),
      ...(weights ? { weights } : {}),
      stateName, // its own progress: the default recall's says nothing of this index
      scope: ["userId"],
      range: { before: 0, after: 0 },
      onError: (error) => console.error(error),
    });
  const weakTrusted = weakRecall("recall-weak");
  const weakFused = weakRecall("recall-weak-fused", { vector: 1 });
  const results = new Map<string, { kind: QuestionKind; evidence: [number, number][]; top: [number, number][] }[]>();
  const times = new Map<string, number[]>();
  try {
    for (const conversation of set) {
      const scope = { userId: conversation.id };
      for (const [s, session] of conversation.sessions.entries()) {
        await store.append(
          { ...scope, conversationId: `s${s}` },
          session.turns.map((turn) => (turn.speaker === "A" ? new HumanMessage(turn.text) : new AIMessage(turn.text))),
        );
        await recall.resume(store, scope);
        await lifted.resume(store, scope);
        await weakTrusted.resume(store, scope);
        await weakFused.resume(store, scope);
      }
      const ranker =
        (memory: RecallMemory): Ranker =>
        async (question, k) => {
          // Best first (recall gives its passages in conversation order), so the sessions they come from are ranked as peers rank them.
          const passages = (await memory.search(store, scope, question, { k })).sort((a, b) => b.score - a.score);
          return passages.flatMap((passage) =>
            Array.from({ length: passage.to - passage.from + 1 }, (_, i): [number, number] => [
              Number(String(passage.session.conversationId).slice(1)),
              passage.from + i,
            ]),
          );
        };
      const systems: [string, Ranker][] = [
        ["memoria (default recall)", ranker(recall)],
        ["memoria with weights.neighbours 0.5 (off by default)", ranker(lifted)],
        ["memoria with a weak embedding (hashing, 32 dimensions, the weight it earns)", ranker(weakTrusted)],
        ["memoria with a weak embedding fused at weights.vector 1", ranker(weakFused)],
        ["memoria without its concept lexicon (the same words, no ~topic terms)", withoutLexicon(conversation)],
        ["BM25 (k1 1.2, b 0.75)", bm25(conversation)],
        ["BM25 tuned (Porter stemming, stop list, b 0.4)", bm25(conversation, stemmedWords, 0.4)],
        ["vectors (HashingEmbeddings)", vectors(conversation, embeddings)],
      ];
      for (const [system, rank] of systems) {
        const list = results.get(system) ?? [];
        const spent = times.get(system) ?? [];
        for (const q of conversation.questions) {
          let top: [number, number][] = [];
          for (const k of KS) {
            let found: [number, number][] = [];
            const ms = await timed(async () => {
              found = await rank(q.question, k);
            });
            if (k === 10) spent.push(ms);
            // Each k is its own query (memoria returns a set, not a ranking): a turn counts at the smallest k that found it.
            top = [...top, ...found.filter(([s, t]) => !top.some(([s2, t2]) => s2 === s && t2 === t))];
          }
          list.push({ kind: q.kind, evidence: q.evidence, top });
        }
        results.set(system, list);
        times.set(system, spent);
      }
    }
    const kinds = [...new Set(set.flatMap((c) => c.questions.map((q) => q.kind)))].sort();
    return [...results].flatMap(([system, list]) => [
      score(system, "all", list, times.get(system) ?? []),
      ...kinds.map((kind) =>
        score(
          system,
          kind,
          list.filter((q) => q.kind === kind),
          [],
        ),
      ),
    ]);
  } finally {
    await Promise.all([recall.idle(), lifted.idle(), weakTrusted.idle(), weakFused.idle()]);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
