import type { HistoryStore } from "@memoria/core";
import { UsageError } from "./cli-error.js";
import { counted } from "./counted.js";
import { isMissingModule } from "./store-url.js";

/** Where LangGraph.js keeps checkpoints: `SqliteSaver`'s file, or `PostgresSaver`'s database. */
export type LangGraphLayout = "langgraph-sqlite" | "langgraph-postgres";

export interface LangGraphSourceOptions {
  /** PostgresSaver: the schema its tables are in. @default "public" */
  schema?: string;
}

/** What the import uses of @memoria/langgraph and of LangGraph's savers (optional peers, typed here as used). */
interface MemoriaLangGraph {
  MemoriaSaver: new (options: { store: HistoryStore }) => unknown;
  copyThreads(source: unknown, target: unknown): Promise<{ threads: number; checkpoints: number; writes: number }>;
}
interface SqliteSaverModule {
  SqliteSaver: new (db: unknown) => unknown;
}
interface PostgresSaverModule {
  PostgresSaver: { fromConnString(url: string, options: { schema: string }): { end(): Promise<void> } };
}
type BetterSqlite3 = new (path: string, options: { readonly: boolean; fileMustExist: boolean }) => { close(): void };

/**
 * An optional peer, imported when an import needs it: missing, it is a usage error
 * naming what to install. Imported, not required as core's `loadPeerDependency`
 * does: `require` would load @memoria/langgraph's CommonJS build, with a second copy
 * of @memoria/core beside the one the store came from.
 */
async function load<T>(name: string, what: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if (isMissingModule(error, name)) throw new UsageError(`${what} needs ${name} beside @memoria/cli, and it is not installed: npm install ${name}`);
    throw error;
  }
}

const SCHEMA = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** LangGraph's own saver over the source, which reads its checkpoints as LangGraph wrote them; a SQLite file is opened read-only. */
async function sourceSaver(layout: LangGraphLayout, source: string, options: LangGraphSourceOptions): Promise<{ saver: unknown; close(): Promise<void> }> {
  if (layout === "langgraph-sqlite") {
    const { SqliteSaver } = await load<SqliteSaverModule>("@langchain/langgraph-checkpoint-sqlite", "Importing SqliteSaver's checkpoints");
    const { default: Database } = await load<{ default: BetterSqlite3 }>("better-sqlite3", "Importing SqliteSaver's checkpoints");
    let db: InstanceType<BetterSqlite3>;
    try {
      db = new Database(source, { readonly: true, fileMustExist: true });
    } catch (error) {
      throw new UsageError(`cannot open ${source} as SqliteSaver's database: ${(error as Error).message}`);
    }
    return { saver: new SqliteSaver(db), close: async () => db.close() };
  }
  const schema = options.schema ?? "public";
  if (!SCHEMA.test(schema)) throw new UsageError(`--schema must be a schema name, got ${JSON.stringify(schema)}.`);
  const { PostgresSaver } = await load<PostgresSaverModule>("@langchain/langgraph-checkpoint-postgres", "Importing PostgresSaver's checkpoints");
  const saver = PostgresSaver.fromConnString(source, { schema });
  return { saver, close: () => saver.end() };
}

/**
 * Copies every thread a LangGraph checkpointer holds into `store`, as `MemoriaSaver`
 * keeps threads (`copyThreads` of @memoria/langgraph): each checkpoint with its
 * metadata, parent and pending writes, the messages stored once as the thread's
 * history. Copying again stores nothing twice, so an import cut short is finished by
 * running it again. Returns the report line: what the source held.
 */
export async function importLangGraph(layout: LangGraphLayout, source: string, store: HistoryStore, options: LangGraphSourceOptions): Promise<string> {
  const { MemoriaSaver, copyThreads } = await load<MemoriaLangGraph>("@memoria/langgraph", "Importing LangGraph checkpoints");
  const { saver, close } = await sourceSaver(layout, source, options);
  try {
    const report = await copyThreads(saver, new MemoriaSaver({ store }));
    return `imported ${counted(report.threads, "thread")}: ${counted(report.checkpoints, "checkpoint")}, ${counted(report.writes, "pending write")}`;
  } finally {
    await close();
  }
}
