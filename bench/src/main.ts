/**
 * `pnpm bench [--quick] [--only W1,W2,…]`: memoria against LangChain.js in one run,
 * on the same servers, interleaved. Full runs write bench/results/latest.md and
 * bench/results/latency.svg; --quick (CI's smoke run) writes bench/results/quick.md;
 * --only writes bench/results/<workloads>.md (e.g. W7.md); --out FILE writes the report
 * there instead.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem, type as osType, release } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import { type RunningRedis, type RunningServer, jongodbBinary, startJongodb, startMariadb, startPostgres, startRedis } from "@memoria/testkit/servers";
import { formatMs, percent, ratio } from "./measure.js";
import { privacyCost, privacyRounds } from "./privacy-cost.js";
import { langgraphSection } from "./langgraph-report.js";
import { latencyChart, table } from "./report.js";
import type { StoreKind } from "./systems.js";
import { type ServerUrls, closeKind, kindNames, latencyInProcesses, openKind } from "./latency-processes.js";
import { latencySections } from "./latency-report.js";
import { latencyBySize } from "./latency.js";
import { longTermSections } from "./long-term-report.js";
import { compactionTokens } from "./compaction.js";
import { promptCacheRows } from "./prompt-cache.js";
import { soakSection } from "./soak-report.js";
import { type ChatRow, chatPersistence } from "./ai-sdk-chat.js";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { createRedisStore } from "@memoria/redis";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { type Settings, ceilings, concurrentTurns, memoryFootprint } from "./workloads.js";
import { wrapperCost } from "./wrapper-cost.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    sizes: { type: "string" },
    stores: { type: "string" },
    out: { type: "string" },
  },
});
const quick = values.quick as boolean;
const only = new Set((values.only ?? "W1,W2,W3,W4,W5,W6,W7,W8,W9,W10,W11,W12,W13").split(",").map((w) => w.trim().toUpperCase()));
// --quick is CI's smoke run: every workload once, small, in about 30 s; its figures are rough.
const defaults: Settings = quick
  ? { quick, sizes: [20, 1_000], runs: 3, warmupMs: 50 }
  : { quick, sizes: [10, 20, 1_000, 10_000, 100_000], runs: 25, warmupMs: 1_000 };
// --sizes 10,10000 and --stores sqlite,redis narrow a run while working on one path (the report says so).
const settings: Settings = values.sizes ? { ...defaults, sizes: values.sizes.split(",").map(Number) } : defaults;
const storeFilter = values.stores?.split(",").map((name) => name.trim());
const log = (line: string) => console.log(line);
const results = join(import.meta.dirname, "..", "results");

function version(pkg: string): string {
  const here = join(import.meta.dirname, "..", "node_modules", pkg, "package.json");
  try {
    return JSON.parse(readFileSync(here, "utf8")).version;
  } catch {
    return "?";
  }
}

const started = Date.now();
const servers: (RunningServer | RunningRedis)[] = [];
const opened: StoreKind[] = [];
const kinds: StoreKind[] = [];
const sections: string[] = [];
try {
  log(`memoria bench${quick ? " (quick)" : ""}: starting servers`);
  // PostgreSQL with its defaults (fsync, synchronous_commit): a commit's cost is part of a turn's.
  const postgresUrl = process.env.DATABASE_URL ?? (servers[servers.push(await startPostgres({ durable: true })) - 1] as RunningServer).url;
  // AOF with everysec, as Redis is usually run in production (the tests' server syncs every write).
  const redis = process.env.REDIS_URL ? undefined : await startRedis(["--appendfsync", "everysec"]);
  if (redis) servers.push(redis);
  const redisUrl = process.env.REDIS_URL ?? (redis as RunningRedis).url;
  const mongoUrl =
    process.env.MONGODB_URL ?? (servers[servers.push(await startJongodb(jongodbBinary(createRequire(import.meta.url)))) - 1] as RunningServer).url;
  // MariaDB (InnoDB's defaults: a commit is flushed) for the full run only: it takes seconds to start.
  const mysqlUrl = process.env.MYSQL_URL ?? (quick ? undefined : (servers[servers.push(await startMariadb({ durable: true })) - 1] as RunningServer).url);
  const urls: ServerUrls = { postgres: postgresUrl, mysql: mysqlUrl, redis: redisUrl, mongo: mongoUrl, realMongo: Boolean(process.env.MONGODB_URL) };
  for (const name of kindNames(urls)) opened.push(await openKind(name, urls));
  kinds.push(...opened.filter((kind) => !storeFilter || storeFilter.includes(kind.name)));

  if (only.has("W1")) {
    log("W1: the wrapper's own cost per turn (in-memory store, trivial model)");
    const rows = await wrapperCost(settings);
    const shown = (value: number) => (Number.isFinite(value) ? ratio(value, 1) : "—");
    sections.push(
      "## W1: the wrapper's own cost per turn\n\nIn-memory stores, a model that returns at once. memoria's default strategy reads the whole history (as LangChain's wrapper does), from an in-memory store that keeps frozen messages and hands the same objects to every read (a read is an array copy; changing a message throws); `frozen: false` hands out copies instead. With `windowMemory({ k: 10 })` it reads the last 20 messages. The ceiling (\"by hand\") calls the same model with the history kept in an array: a wrapper's cost is its turn minus that, and the last columns compare memoria's wrapper cost with LangChain's. Each contender runs in processes of its own (a program runs one wrapper, not five sharing one JIT's type feedback), three each in the full run (how fast a process runs the same code varies from one process to the next), and the processes take turns, one sample at a time, each round in a new order, after each has run untimed for a second (so each is measured with its code optimized, as a running server's is). Times: medians of every process's samples (" +
        (settings.quick ? "2 rounds" : "7 rounds of three processes") +
        "); ratios: the median over rounds of each round's ratio, since a round measures every process within seconds while the machine's speed drifts over a run.\n",
      table(
        [
          "workload",
          "memoria (default)",
          "memoria (copies)",
          "memoria (window)",
          "LangChain",
          "by hand",
          "turn ÷ LangChain (default)",
          "wrapper cost ÷ LangChain's (default)",
          "(copies)",
          "(window)",
        ],
        rows.map((r) => [
          r.workload,
          formatMs(r.memoria),
          formatMs(r.memoriaCopies),
          formatMs(r.memoriaWindow),
          formatMs(r.langchain),
          formatMs(r.bare),
          shown(r.ratios.turn),
          shown(r.ratios.cost),
          shown(r.ratios.copiesCost),
          shown(r.ratios.windowCost),
        ]),
      ),
    );
  }

  if (only.has("W2") || only.has("W3")) {
    log("W2/W3: latency against session length");
    // The quick run measures every store in this process: a process per store (for
    // figures free of each other's heap and JIT) cost a second each to start.
    const { points, flatness } = quick
      ? await latencyBySize(kinds, settings, log)
      : await latencyInProcesses(
          kinds.map((kind) => kind.name),
          { settings, urls },
          log,
        );
    sections.push(...latencySections(points, flatness, quick));
    if (!quick && values.only === undefined && values.out === undefined) writeFileSync(join(results, "latency.svg"), latencyChart(points));
  }

  if (only.has("W4")) {
    log("W4: 50 concurrent turns on one session");
    const rows = await concurrentTurns(kinds);
    sections.push(
      "## W4: 50 concurrent turns on one session\n\nEach turn's answer records how many messages it saw; serialized, the k-th turn to finish saw 2k + 1.\n",
      table(
        ["store", "system", "messages stored (of 100)", "lost", "duplicated", "misordered pairs", "turns that missed an earlier turn"],
        rows.map((r) => [r.store, r.system, r.stored, r.lost, r.duplicated, r.misordered, r.missedTurns]),
      ),
    );
  }

  if (only.has("W5")) {
    log("W5: memory of the in-memory stores");
    const rows = await memoryFootprint(settings);
    const [ours, theirs] = rows;
    sections.push(
      `## W5: heap of an in-memory history holding ${rows[0]?.sessions.toLocaleString("en")} sessions of 5 turns\n\nEach system runs 5 real turns per session (a question, and the model's answer) through its own RunnableWithMessageHistory over its in-memory history, in a fresh process; the heap it grew by, after a full GC, over the messages stored.\n`,
      table(
        ["system", "heap", "bytes per message"],
        rows.map((r) => [r.system, `${r.heapMB.toFixed(0)} MB`, r.bytesPerMessage.toFixed(0)]),
      ),
      `\nratio memoria / LangChain: ${ours && theirs ? ratio(ours.heapMB, theirs.heapMB) : "—"}`,
    );
  }

  if (only.has("W6")) {
    log("W6: the ceiling");
    const redisPort = Number(new URL(redisUrl).port);
    const rows = await ceilings(redisPort, settings);
    sections.push(
      "## W6: the ceiling\n",
      table(
        ["measure", "value", "what it is"],
        rows.map((r) => [r.name, r.value, r.note]),
      ),
    );
  }

  if (only.has("W7")) {
    log("W7: what privacy costs a turn (SQLite, Redis)");
    const sessionSize = quick ? 200 : 1_000;
    const rows = await privacyCost(redisUrl, settings, sessionSize);
    sections.push(
      `## W7: what privacy costs a turn\n\nThe same store plain, wrapped by \`encryptStore\` (AES-256-GCM, a data key per session), with hashed ids too, with per-user keys in a \`fileKeyVault\` (crypto-shredding; here the scope field is the session id, so every session has its own vault key), and with \`redactStore\` (the built-in patterns) over the encrypted store. A turn with \`windowMemory({ k: 10 })\` (20 messages read) on a session of ${sessionSize.toLocaleString("en")} messages, seeded in two-message turns through each variant. The variants run in blocks of 20 turns, one after another, each round in a new order (from a fixed seed), for ${privacyRounds(settings)} rounds (${20 * privacyRounds(settings)} turns each, medians), so each is measured with its own code warm: alternating the code paths turn by turn slowed all of them, the larger ones most, which measures the alternation more than the wrapper. Target: encryption under 1.10× the plain turn.\n`,
      table(
        ["store", "variant", "turn", "read last 20", "turn ÷ plain"],
        rows.map((r) => [r.store, r.variant, formatMs(r.turn), formatMs(r.read), `${r.turnRatio.toFixed(2)}×`]),
      ),
      "\n### The whole history\n\nThe same sessions after those turns, in the same blocks: a turn with the default strategy (the whole history read, and the prompt made of it) and `store.read(key)` of the whole session, each against the plain store's (read ÷ plain: what opening every record costs). Target: whole reads ≤ 1.3× plain.\n",
      table(
        ["store", "variant", "turn, whole history", "whole read", "whole turn ÷ plain", "whole read ÷ plain", "read last 20 ÷ plain"],
        rows.map((r) => {
          const plain = rows.find((p) => p.store === r.store && p.variant === "plain") as (typeof rows)[number];
          return [
            r.store,
            r.variant,
            formatMs(r.turnWhole),
            formatMs(r.readWhole),
            ratio(r.turnWhole, plain.turnWhole),
            ratio(r.readWhole, plain.readWhole),
            ratio(r.read, plain.read),
          ];
        }),
      ),
    );
  }

  if (only.has("W8")) {
    log("W8: long-term memory (SQLite): turn cost, recall quality; recall query time (SQLite, PostgreSQL)");
    sections.push(...(await longTermSections(settings, log, postgresUrl)));
  }

  if (only.has("W9")) {
    log("W9: memoria as LangGraph's checkpointer, against LangGraph's savers (turn latency, bytes per thread)");
    sections.push(...(await langgraphSection(postgresUrl, settings, log)));
  }

  if (only.has("W10")) {
    log("W10: prompt tokens per turn of a tool-heavy conversation, compacted against the whole history");
    const rows = await compactionTokens(quick ? [10, 30] : [10, 50, 100, 200]);
    sections.push(
      "## W10: prompt tokens of a tool-heavy conversation\n\nEach turn: a question, four tool calls with results of about 300 tokens, an answer. LangChain's `RunnableWithMessageHistory` sends the whole history; memoria's with `toolResultCompaction({ maxTokens: 8_000 })` (SQLite) sends old tool results as stubs that say where to read them, then leaves out old turns if still over. Tokens of the model's input at that turn (js-tiktoken cl100k_base, the same counter for both); the load is the strategy's alone, median of 3. The stored history is the same whole one in both. Prompt cache: of the tokens memoria sent from turn 11 to that turn, the share a provider's cache holding the previous turn's prompt matches (its longest shared prefix), with compaction in steps (the default, `stepTokens` half the budget) and fitted as tightly as possible every turn (`stepTokens: 0`).\n",
      table(
        [
          "turns",
          "tool calls",
          "LangChain (whole history)",
          "memoria (compacted)",
          "memoria ÷ LangChain",
          "memoria's load",
          "prompt cache matched (steps)",
          "(tightest)",
        ],
        rows.map((r) => [
          String(r.turns),
          String(r.toolCalls),
          r.langchainTokens.toLocaleString("en"),
          r.memoriaTokens.toLocaleString("en"),
          ratio(r.memoriaTokens, r.langchainTokens),
          formatMs(r.memoriaLoadMs),
          percent(r.cacheMatched.stepped),
          percent(r.cacheMatched.tightest),
        ]),
      ),
    );
  }

  if (only.has("W11")) {
    log("W11: an AI SDK chat's persistence per turn (loadChat + saveChat) against the bare store's read + append");
    const dir = mkdtempSync(join(tmpdir(), "memoria-bench-ai-sdk-"));
    const stores = [
      ["sqlite", createSqliteStore({ path: join(dir, "chat.db") })],
      ["postgres", createPostgresStore({ connectionString: postgresUrl, tablePrefix: "bench_ai_" })],
      ["redis", createRedisStore({ url: redisUrl, keyPrefix: "bench-ai:" })],
    ] as const;
    const rows: ChatRow[] = [];
    try {
      for (const [name, store] of stores)
        rows.push(...(await chatPersistence(name, store, quick ? [10, 100] : [10, 100, 1_000], settings.runs, settings.warmupMs)));
    } finally {
      await Promise.all(stores.map(([, store]) => store.close()));
      rmSync(dir, { recursive: true, force: true });
    }
    sections.push(
      "## W11: an AI SDK chat's persistence per turn\n\nmemoria: `loadChat` (the whole chat as UI messages; no schemas given, so no `validateUIMessages`) then `saveChat(…, { loaded })` of the list with a new question and answer (planned from the loaded chat, it stores the two new messages once; a stale plan is refused by the store and made again). The bare store: `read` of the whole session and `append` of the same two messages as LangChain messages. Chat-length messages (about 120 characters); medians of interleaved runs, after both sides ran for a second on a throwaway chat (warm code, as in a server); the chats grow by two messages a turn over the run. Goal: at most 1.3× the bare store.\n",
      table(
        ["store", "messages", "memoria (load + save)", "bare store (read + append)", "memoria ÷ bare"],
        rows.map((r) => [r.store, r.messages.toLocaleString("en"), formatMs(r.memoriaMs), formatMs(r.bareMs), ratio(r.memoriaMs, r.bareMs)]),
      ),
    );
  }

  if (only.has("W12")) {
    const turns = quick ? 40 : 200;
    log(`W12: tokens billed at full price by a provider's prompt cache over ${turns} turns, sliding windows against windows that move in blocks`);
    const rows = await promptCacheRows(turns, quick ? 2_000 : 4_000, 10);
    const byName = new Map(rows.map((r) => [r.strategy, r]));
    sections.push(
      `## W12: prompt cache over a long conversation\n\n${turns} turns of one conversation (a question of about 40 tokens, an answer of about 200, a system prompt of about 150), the same through every strategy; each prompt as the model received it. Full price: a prompt's tokens past the prefix it shares with the previous turn's prompt, cached as OpenAI caches (nothing below 1,024 tokens, then in steps of 128); js-tiktoken cl100k_base. History: tokens of history in the prompt over the second half of the conversation, least and most. Each memoria row is measured against the LangChain window of its kind; a row that moves in blocks is sized to hold at least what that sliding window holds.\n`,
      table(
        ["strategy", "history (least–most)", "tokens sent", "billed at full price", "full price ÷ LangChain's"],
        rows.map((r) => [
          r.strategy,
          `${r.history.least.toLocaleString("en")}–${r.history.most.toLocaleString("en")}`,
          r.sent.toLocaleString("en"),
          r.fullPrice.toLocaleString("en"),
          r.versus ? ratio(r.fullPrice, (byName.get(r.versus) as (typeof rows)[number]).fullPrice) : "1.00",
        ]),
      ),
    );
  }

  if (only.has("W13")) {
    log("W13: sustained load: worker processes on shared sessions, a server restart and a killed worker, then an audit");
    sections.push(...(await soakSection(quick, log)));
  }
} finally {
  await Promise.all(opened.map(closeKind));
  await Promise.all(servers.map((s) => s.stop()));
}

const header = [
  `# memoria vs LangChain.js${quick ? " (quick run)" : ""}`,
  "",
  `Run ${new Date().toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s with \`pnpm bench${quick ? " --quick" : ""}\`.`,
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${osType()} ${release()}, Node ${process.version}.`,
  `Versions: @langchain/core ${version("@langchain/core")}, @langchain/community ${version("@langchain/community")}, ioredis ${version("ioredis")}, pg ${version("pg")}, better-sqlite3 ${version("better-sqlite3")}; PostgreSQL and Redis as started by \`@memoria/testkit/servers\` (PostgreSQL with its defaults: fsync and synchronous_commit on; Redis with AOF and appendfsync everysec, MongoDB: the jongodb compatible server unless MONGODB_URL is set).`,
  `Method: medians of ${settings.runs} interleaved runs (each round in a new order from a fixed seed) after warm-up rounds (W2/W3: see their sections; rows that read 100,000 messages whole: ${Math.max(5, Math.round(settings.runs / 3))} runs); each section says what runs between its samples. Ratios are memoria ÷ LangChain, or memoria ÷ the bare engine (ceiling): below 1, memoria is faster or smaller.`,
  "",
];
const report = `${[...header, ...sections].join("\n")}\n`;
// A run of some workloads only (--only) writes its own file, leaving the full run's report whole.
const partial =
  values.only === undefined && !values.sizes && !storeFilter ? undefined : [...only].sort().join("-") + (values.sizes || storeFilter ? "-narrowed" : "");
// --out writes the report there instead, leaving results/ as it is (what `compare` runs).
writeFileSync(values.out ?? join(results, quick ? "quick.md" : partial ? `${partial}.md` : "latest.md"), report);
console.log(`\n${report}`);
