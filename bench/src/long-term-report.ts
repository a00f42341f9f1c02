import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { formatMs, percent } from "./measure.js";
import { defaultRecallCacheBytes } from "@memoria/sql";
import { PAUSE_MS, type RecallQuality, longTermTurns, recallQuality, recallQueryTime } from "./long-term.js";
import { KS, type RecallScore, SESSION_KS, recallQualityScores } from "./recall-quality.js";
import { table } from "./report.js";
import type { Settings } from "./workloads.js";

function quality(label: string, q: RecallQuality): string[] {
  return [
    label,
    `${q.hits} / ${q.questions} (${((100 * q.hits) / q.questions).toFixed(0)}%)`,
    `${q.changedNewer} / ${q.changed} (${((100 * q.changedNewer) / q.changed).toFixed(0)}%)`,
  ];
}

/**
 * W8's sections. With OPENAI_BASE_URL (and OPENAI_MODEL, OPENAI_EMBEDDINGS_MODEL)
 * set, the recall set also runs through that real model and those embeddings.
 */
export async function longTermSections(settings: Settings, log: (line: string) => void, postgresUrl: string): Promise<string[]> {
  const turns = [...(await longTermTurns(settings, 0)), ...(await longTermTurns(settings, 50))];
  const base = (modelMs: number) => turns.find((t) => t.modelMs === modelMs && t.variant === "buffer memory")?.turn ?? Number.NaN;
  log("W8: recall set");
  const rows = [quality("scripted model, hashing embeddings (offline)", await recallQuality())];
  const env = process.env;
  if (env.OPENAI_BASE_URL || env.OPENAI_API_KEY) {
    const configuration = env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : undefined;
    const model = new ChatOpenAI({ model: env.OPENAI_MODEL ?? "gpt-4o-mini", apiKey: env.OPENAI_API_KEY ?? "not-needed", configuration });
    const embeddings = new OpenAIEmbeddings({
      model: env.OPENAI_EMBEDDINGS_MODEL ?? "text-embedding-3-small",
      apiKey: env.OPENAI_API_KEY ?? "not-needed",
      configuration,
    });
    rows.push(quality(`${model.model}, ${embeddings.model}`, await recallQuality({ model, embeddings })));
  }
  log("W8: recall quality on long conversations");
  const scores = await recallQualityScores(settings.quick ? { conversations: 1 } : {});
  log("W8: recall quality on the held-out conversations");
  const heldOut = await recallQualityScores(settings.quick ? { conversations: 1, set: "held-out" } : { set: "held-out" });
  /** memoria's default recall against BM25 as run plainly and as tuned, on one set. */
  const ratios = (set: RecallScore[]) => {
    const all = (system: string) => set.find((s) => s.system.startsWith(system) && s.kind === "all");
    const memoria = all("memoria");
    const versus = (other: RecallScore | undefined) =>
      `recall@5 ${((memoria?.recall[5] ?? 0) / (other?.recall[5] ?? 1)).toFixed(2)}×, recall@10 ${((memoria?.recall[10] ?? 0) / (other?.recall[10] ?? 1)).toFixed(2)}×`;
    return `memoria ÷ BM25: ${versus(all("BM25 ("))}; memoria ÷ tuned BM25: ${versus(all("BM25 tuned"))}.\n`;
  };
  const scoreTable = (set: RecallScore[]) =>
    table(
      ["system", "questions", ...KS.map((k) => `recall@${k}`), "hit@5", "hit@10", ...SESSION_KS.map((k) => `sessions@${k}`), "query"],
      set.map((s) => [
        s.kind === "all" ? `**${s.system}**` : `  ${s.kind}`,
        String(s.questions),
        ...KS.map((k) => percent(s.recall[k] ?? 0)),
        percent(s.hit[5] ?? 0),
        percent(s.hit[10] ?? 0),
        ...SESSION_KS.map((k) => percent(s.sessions[k] ?? 0)),
        s.kind === "all" ? formatMs(s.queryMs) : "",
      ]),
    );
  log("W8: recall query time");
  const sizes = settings.quick ? [2_000] : [10_000, 100_000];
  const queries = [];
  for (const items of sizes) queries.push(...(await recallQueryTime(items, settings.quick ? 5 : 15, postgresUrl)));
  return [
    "## W8: long-term memory on SQLite\n\nA turn with `bufferMemory()` against the same turn with `factMemory` and `recallMemory` (scope `userId`) on top: extraction by a scripted model that answers after 20 ms, hashing embeddings, sqlite-vec. Each user holds " +
      String(settings.quick ? 3 : 20) +
      " earlier conversations, already processed. The chat model answers at once (the row shows what memory itself adds to a turn) or after 50 ms (a fast hosted model answers in hundreds). Extraction and embedding run after the call resolves; the bench lets every variant's finish before each turn, untimed. Every timed turn, of either variant, then starts after a pause of " +
      String(PAUSE_MS) +
      " ms (a person's pause, shortened), so each is measured as a chat's turn runs, on code and caches the pause let go cold; each round runs the variants in a new order (from a fixed seed). Medians of " +
      `${settings.quick ? settings.runs : 2 * settings.runs} turns each. Target: ≤ 1.2× the buffer turn.\n`,
    table(
      ["chat model", "memory", "turn", "÷ buffer turn"],
      turns.map((t) => [t.modelMs === 0 ? "instant" : `${t.modelMs} ms`, t.variant, formatMs(t.turn), (t.turn / base(t.modelMs)).toFixed(2)]),
    ),
    "\n### Recall quality\n\nThe repo's recall set (`bench/src/recall-set.ts`): 10 users × 5 conversations, 50 questions whose answer was said in an earlier conversation, 10 facts changed in a later one (a move or a new job). Hit: the message holding the answer is among recall's top 5. Newer value: the fact that holds now is the new one, and the old one is closed. Run it against a real model and embeddings with `OPENAI_BASE_URL=… OPENAI_API_KEY=… OPENAI_MODEL=… OPENAI_EMBEDDINGS_MODEL=… pnpm bench --only W8`.\n",
    table(["model and embeddings", "answer in top 5", "changed facts answered with the newer value"], rows),
    "\n### Recall query time\n\nTop 5 by vector, and top 10 by words, of one scope holding that many items (256 dimensions, hashing embeddings of synthetic notes, about 7 terms each): the SQLite and PostgreSQL stores' indexes, whose first query at a version ranks in SQL (sqlite-vec's `vec_distance_cosine`, or the BM25 statement; PostgreSQL reads the scope's vectors and ranks them in the process) and whose second loads the scope into the process, where it is ranked from then on (an exact scan over one block of memory, by WebAssembly SIMD; the same BM25) while it fits the store's budget (`recallCacheBytes`; by default a sixteenth of the memory the process may use, between 32 and 512 MiB: " +
      `${(defaultRecallCacheBytes() / 1024 / 1024).toFixed(0)} MiB on this machine); the same with no budget (\`recallCacheBytes: 0\`, every query in SQL); and \`exactIndex()\` (the same in-process ranking, with nothing to check). First queries: the first two by vector, in order. Then medians of ${settings.quick ? 5 : 15} queries, the indexes interleaved. Words: two of the twelve common words and a note's number (rare), or the two common words only (each in a quarter of the items, so every posting is read). Targets: top 5 of 100,000 by vector ≤ 10 ms on SQLite, and ≤ 2× the exact scan at 10,000; top 10 of 100,000 by words ≤ 20 ms on SQLite and PostgreSQL.\n`,
    table(
      ["items in the scope", "index", "first query, second (loads)", "top 5 by vector", "top 10 by words", "by common words only"],
      queries.map((q) => [
        q.items.toLocaleString("en"),
        q.index,
        `${formatMs(q.first[0])}, ${formatMs(q.first[1])}`,
        formatMs(q.query),
        q.words === undefined ? "–" : formatMs(q.words),
        q.commonWords === undefined ? "–" : formatMs(q.commonWords),
      ]),
    ),
    "\n### Recall quality on long conversations\n\n" +
      `The generated set (\`bench/src/recall-conversations.ts\`, the same on every run): ${settings.quick ? 1 : 10} two-person conversations of 24 sessions, about 340 turns each, with the turns that answer each later question labelled. Names recur in small talk far more than in the turns that matter, small talk shares the questions' everyday words, some answers are phrased with none of the question's words (paraphrase), facts change (a new job, a move), and multi-hop questions need two turns. memoria's default recall on SQLite (sessions indexed one after another as in use, \`HashingEmbeddings\`, ranked as \`recallMemory\` ranks, \`range\` 0) against plain BM25 (k1 1.2, b 0.75, no stemming, no stop words), BM25 tuned as IR practice tunes it (the Porter stemmer of the \`stemmer\` package, the \`stopword\` package's English list with the question words it lacks, b 0.4) plain vectors (the same embeddings, exact cosine), memoria's words without its concept lexicon (the same terms and ranking, no \`~topic\` terms: what the lexicon earns), and memoria with each word hit lifted by half its better neighbour's score (\`weights.neighbours\` 0.5, off by default: chosen on this set, it loses at recall@5 on the held-out one) over the same turns; and memoria with a weak embedding given as a real one (words hashed into 32 dimensions, so many collide, in an \`exactIndex()\`), at the vector weight it earns on recall's trust check (\`embeddingTrust\`) and forced to \`weights.vector\` 1: what an embedding that ranks worse than the words would cost the fusion, and what the check saves. recall@k: the share of a question's answering turns in the top k; hit@k: questions with at least one; sessions@k: the share of a question's answering sessions among the first k sessions its ranked turns come from (the session-level figure peers publish). This is the **tuning set**: memoria's ranking parameters and its concept lexicon were chosen on it, so its figures are a best case. Query: median of one top-10 query (memoria's includes reading the hits' messages from the store).\n\n` +
      ratios(scores),
    scoreTable(scores),
    "\n### Recall quality on held-out conversations\n\n" +
      `The **held-out set** (\`bench/src/recall-held-out.ts\`): ${settings.quick ? 1 : 10} chats of 24 sessions from a generator of its own, with other people, topics (a car, an allergy, a language, a garden, a league, volunteering, a move, a relative's new trade, a trip, a gift, a job), words and register (texting) than the tuning set's, measured the same way. Nothing in the ranking or the lexicon is chosen on it; it is reported as it stands. Its generator was written by the same team as the lexicon, after it, with other words on purpose: a check on overfitting to the tuning set, not a set from outside.\n\n` +
      ratios(heldOut),
    scoreTable(heldOut),
  ];
}
