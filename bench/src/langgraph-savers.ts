/**
 * W9: memoria as LangGraph's checkpointer, against LangGraph's own savers in the same
 * run: the latency of one turn of a thread, and the bytes a thread takes, after
 * 10, 100 and 1,000 turns.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { type BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { type HistoryStore, createInMemoryStore } from "@memoria/core";
import { MemoriaSaver } from "@memoria/langgraph";
import { createPostgresStore, createSqliteStore } from "@memoria/sql";
import Database from "better-sqlite3";
import pg from "pg";
import { interleave, median } from "./measure.js";
import type { Settings } from "./workloads.js";

const FILLER = "The quarterly report covers revenue, hiring, the roadmap and three open risks that need an owner before the next review.";

/** A graph that answers each question with a chat-length reply: the turn of a chat agent, without the model's time. */
function chatGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("reply", (state) => {
      const last = state.messages[state.messages.length - 1] as BaseMessage;
      return { messages: [new AIMessage(`About "${String(last.content).slice(0, 24)}": ${FILLER}`)] };
    })
    .addEdge(START, "reply")
    .addEdge("reply", END)
    .compile({ checkpointer });
}

interface Contender {
  name: string;
  engine: "memory" | "sqlite" | "postgres";
  saver: BaseCheckpointSaver;
  /** Bytes the thread takes where it is stored; undefined for memory. */
  bytes(): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface SaverRow {
  /** Turns the thread held when its bytes were measured: the seeded ones, the warm-up and the timed ones. */
  turns: number;
  seeded: number;
  saver: string;
  engine: string;
  turn: number;
  bytes: number | undefined;
}

async function sqliteBytes(path: string): Promise<number> {
  const db = new Database(path);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.exec("VACUUM");
    return (db.pragma("page_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number);
  } finally {
    db.close();
  }
}

async function postgresBytes(url: string, where: string, value: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("VACUUM");
    const { rows } = await client.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND ${where}`,
      [value],
    );
    return Number(rows[0].bytes);
  } finally {
    await client.end();
  }
}

async function contenders(dir: string, postgresUrl: string, tag: string): Promise<Contender[]> {
  const memoria = (name: string, engine: Contender["engine"], store: HistoryStore, bytes: () => Promise<number | undefined>): Contender => ({
    name,
    engine,
    saver: new MemoriaSaver({ store }),
    bytes,
    close: () => store.close(),
  });
  const langgraphDb = join(dir, `${tag}-langgraph.db`);
  const memoriaDb = join(dir, `${tag}-memoria.db`);
  // Both SQLite savers commit durably: better-sqlite3 opens WAL databases with synchronous=NORMAL
  // (a commit can be lost at a power failure), memoria's store defaults to FULL.
  const langgraphConnection = new Database(langgraphDb);
  langgraphConnection.pragma("journal_mode = WAL"); // as SqliteSaver sets it, before the setting that WAL would otherwise default
  langgraphConnection.pragma("synchronous = FULL");
  const sqliteSaver = new SqliteSaver(langgraphConnection);
  const schema = `lg_${tag}`;
  const postgresSaver = PostgresSaver.fromConnString(postgresUrl, { schema });
  await postgresSaver.setup();
  const memoriaPostgres = createPostgresStore({ connectionString: postgresUrl, tablePrefix: `m${tag}_` });
  const memoriaSqlite = createSqliteStore({ path: memoriaDb });
  return [
    { name: "MemorySaver", engine: "memory", saver: new MemorySaver(), bytes: async () => undefined, close: async () => {} },
    memoria("MemoriaSaver", "memory", createInMemoryStore(), async () => undefined),
    {
      name: "SqliteSaver",
      engine: "sqlite",
      saver: sqliteSaver,
      bytes: async () => {
        langgraphConnection.close();
        return sqliteBytes(langgraphDb);
      },
      close: async () => {},
    },
    memoria("MemoriaSaver", "sqlite", memoriaSqlite, async () => {
      await memoriaSqlite.close();
      return sqliteBytes(memoriaDb);
    }),
    {
      name: "PostgresSaver",
      engine: "postgres",
      saver: postgresSaver,
      bytes: () => postgresBytes(postgresUrl, "n.nspname = $1", schema),
      close: () => postgresSaver.end(),
    },
    memoria("MemoriaSaver", "postgres", memoriaPostgres, () => postgresBytes(postgresUrl, "n.nspname = 'public' AND c.relname LIKE $1", `m${tag}\\_%`)),
  ];
}

/** Turn latency and bytes per thread for each saver, at each thread length. */
export async function langgraphSavers(postgresUrl: string, settings: Settings, log: (line: string) => void): Promise<SaverRow[]> {
  const sizes = settings.quick ? [10] : [10, 100, 1_000];
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-langgraph-"));
  const run = Math.random().toString(36).slice(2, 8);
  const rows: SaverRow[] = [];
  try {
    for (const turns of sizes) {
      // A run's own schema and tables: a second run against the same DATABASE_URL starts from empty threads too.
      const all = await contenders(dir, postgresUrl, `t${turns}_${run}`);
      const graphs = all.map((contender) => ({ contender, graph: chatGraph(contender.saver), n: 0 }));
      const config = { configurable: { thread_id: "bench-thread" } };
      const turn = async (entry: (typeof graphs)[number]) => {
        entry.n += 1;
        await entry.graph.invoke({ messages: [new HumanMessage(`Question ${entry.n}: ${FILLER}`)] }, config);
      };
      for (const entry of graphs) {
        log(`  W9: seeding ${turns} turns through ${entry.contender.name} (${entry.contender.engine})`);
        while (entry.n < turns) await turn(entry);
      }
      const samples = await interleave(Object.fromEntries(graphs.map((entry, i) => [String(i), () => turn(entry)])), settings.runs, 3);
      for (const [i, entry] of graphs.entries()) {
        const bytes = await entry.contender.bytes();
        rows.push({
          turns: entry.n,
          seeded: turns,
          saver: entry.contender.name,
          engine: entry.contender.engine,
          turn: median(samples[String(i)] ?? []),
          bytes,
        });
      }
      await Promise.all(all.map((contender) => contender.close()));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
