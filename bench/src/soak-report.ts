/**
 * W13: sustained load. Worker processes take turns on shared sessions of one store
 * for minutes (seconds in the quick run), with the server restarted a third of the
 * way and a worker killed with SIGKILL half way; then every stored session is
 * audited against every turn that resolved. memoria's wrapper and LangChain's, each
 * on its own history for the same server, under the same load.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore } from "@memoria/core";
import { createRedisStore } from "@memoria/redis";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import { startPostgres, startRedis } from "@memoria/testkit/servers";
import { type SoakReport, runSoak } from "@memoria/testkit/soak";
import { formatMs, ratio } from "./measure.js";
import { table } from "./report.js";
import { closeLangchainHistories as closePostgresHistories, langchainHistory as postgresHistory } from "./soak-stores/postgres.js";
import { closeLangchainHistories as closeRedisHistories, langchainHistory as redisHistory } from "./soak-stores/redis.js";

interface SoakRow {
  store: string;
  system: "memoria" | "LangChain";
  report: SoakReport;
}

const storeModule = (name: string) => join(import.meta.dirname, "soak-stores", `${name}.ts`);

export async function soakSection(quick: boolean, log: (line: string) => void): Promise<string[]> {
  const shape = quick ? { workers: 2, sessions: 4, durationMs: 5_000, windows: 4 } : { workers: 4, sessions: 16, durationMs: 120_000, windows: 6 };
  const langchainMs = quick ? 0 : 60_000;
  const rows: SoakRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), "memoria-soak-"));
  const postgres = await startPostgres({ durable: true });
  const redis = await startRedis();
  const readers: HistoryStore[] = [];
  try {
    const run = async (
      store: string,
      system: SoakRow["system"],
      target: string,
      read: (id: string) => Promise<BaseMessage[]>,
      restart?: () => Promise<void>,
    ) => {
      const durationMs = system === "memoria" ? shape.durationMs : langchainMs;
      log(`  ${store}, ${system}: ${shape.workers} workers × ${shape.sessions} sessions for ${durationMs / 1000} s`);
      const report = await runSoak({
        ...shape,
        durationMs,
        storeModule: storeModule(store),
        target,
        prefix: `${system}-${crypto.randomUUID()}`,
        system: system === "memoria" ? "memoria" : "langchain",
        restart,
        read,
      });
      rows.push({ store, system, report });
    };
    const reader = async (store: HistoryStore) => {
      readers.push(store);
      await store.ready();
      return (id: string) => store.read({ sessionId: id });
    };

    await run("sqlite", "memoria", join(dir, "soak.db"), await reader(createSqliteStore({ path: join(dir, "soak.db") })));
    await run("postgres", "memoria", postgres.url, await reader(createPostgresStore({ connectionString: postgres.url, tablePrefix: "soak_" })), () =>
      postgres.restart(),
    );
    await run("redis", "memoria", redis.url, await reader(createRedisStore({ url: redis.url, keyPrefix: "soak:" })), () => redis.restartGracefully());
    if (langchainMs > 0) {
      await postgresHistory(postgres.url, "init").getMessages(); // its table made once, before the workers race to make it
      await run(
        "postgres",
        "LangChain",
        postgres.url,
        (id) => postgresHistory(postgres.url, id).getMessages(),
        () => postgres.restart(),
      );
      await run(
        "redis",
        "LangChain",
        redis.url,
        (id) => redisHistory(redis.url, id).getMessages(),
        () => redis.restartGracefully(),
      );
    }
  } finally {
    // The audit's LangChain clients too: left open, they kept the bench from exiting after its report.
    await Promise.all([...readers.map((store) => store.close().catch(() => undefined)), closePostgresHistories(), closeRedisHistories()]);
    await Promise.all([postgres.stop(), redis.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }

  const first = (r: SoakReport) => r.windows.find((w) => w.fds > 0) ?? r.windows[0];
  const last = (r: SoakReport) => r.windows.at(-1);
  const rate = (w: SoakReport["windows"][number] | undefined) => (w ? (w.turns / (w.to - w.from)).toFixed(0) : "—");
  const halves = shape.durationMs === 120_000 ? "first minute → last" : "first half → second";
  return [
    `## W13: sustained load\n\n${shape.workers} worker processes take turns on the same ${shape.sessions} sessions at once (every worker on every session, so turns of one session contend across processes) for ${shape.durationMs / 1000} s${langchainMs ? ` (LangChain's wrapper: ${langchainMs / 1000} s)` : ""}: a turn reads the last 20 messages and stores a question and its answer, with a turn id it keeps when it retries a rejected call. A third of the way the server is restarted (PostgreSQL: a fast shutdown and start; Redis: SIGTERM and start, AOF synced on every write; SQLite has no server), and half way a worker is killed with SIGKILL and another takes its place. Then every stored session is read and checked against every turn that resolved: lost (resolved, not stored), doubled (stored twice), misordered (a writer's turns out of its order, or a question not followed by its own answer). Latency is per turn, retries included (the second half holds the killed worker's locks expiring, 3 s); heap and descriptors are the largest live worker's at a window's end. LangChain's \`RunnableWithMessageHistory\` runs the same load on its own history for the same server (\`PostgresChatMessageHistory\`, \`RedisChatMessageHistory\`; it has no turn ids, so a retried turn is sent again as it is; and it finds a turn's new input by slicing the run's input at the history's length, read again after the run, so a turn another writer stored meanwhile makes it drop its own question).\n`,
    table(
      [
        "store",
        "system",
        "turns",
        "turns/s",
        `p99, ${halves}`,
        "÷",
        "turns/s, first window → last",
        "heap, first window → last",
        "descriptors, first window → last",
        "failed calls (retried)",
        "lost",
        "doubled",
        "misordered",
      ],
      rows.map(({ store, system, report }) => {
        const [a, b] = [first(report), last(report)];
        const [early, late] = report.halves;
        return [
          store,
          system,
          report.turns.toLocaleString("en"),
          report.throughput.toFixed(0),
          `${formatMs(early.p99)} → ${formatMs(late.p99)}`,
          ratio(late.p99, early.p99),
          `${rate(report.windows[0])} → ${rate(b)}`,
          `${(a?.heapMB ?? 0).toFixed(0)} → ${(b?.heapMB ?? 0).toFixed(0)} MB`,
          `${a?.fds ?? 0} → ${b?.fds ?? 0}`,
          String(report.failedCalls),
          String(report.lost),
          String(report.doubled),
          String(report.misordered),
        ];
      }),
    ),
    "\n### Over time (memoria)\n",
    table(
      ["store", "window", "turns/s", "p50", "p99", "heap", "descriptors"],
      rows
        .filter((row) => row.system === "memoria")
        .flatMap(({ store, report }) =>
          report.windows.map((w) => [
            store,
            `${w.from.toFixed(0)}–${w.to.toFixed(0)} s`,
            (w.turns / (w.to - w.from)).toFixed(0),
            formatMs(w.p50),
            formatMs(w.p99),
            `${w.heapMB.toFixed(0)} MB`,
            String(w.fds),
          ]),
        ),
    ),
  ];
}
