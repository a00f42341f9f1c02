import { langgraphSavers } from "./langgraph-savers.js";
import { formatMs, ratio } from "./measure.js";
import { table } from "./report.js";
import type { Settings } from "./workloads.js";

const ENGINE_NAMES = { memory: "in memory", sqlite: "SQLite", postgres: "PostgreSQL" } as const;

function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined) return "—";
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** W9's section: each engine's LangGraph saver beside MemoriaSaver on the same engine. */
export async function langgraphSection(postgresUrl: string, settings: Settings, log: (line: string) => void): Promise<string[]> {
  const rows = await langgraphSavers(postgresUrl, settings, log);
  const theirs = (turns: number, engine: string) => rows.find((row) => row.seeded === turns && row.engine === engine && row.saver !== "MemoriaSaver");
  return [
    "## W9: memoria as LangGraph's checkpointer\n\n" +
      "A `StateGraph` with `MessagesAnnotation` and one node that answers each question with a chat-length reply (no model time), checkpointed by LangGraph's own savers (`MemorySaver`, `SqliteSaver`, `PostgresSaver`) and by `MemoriaSaver` on the same engine. Both SQLite savers commit durably (`synchronous = FULL`, memoria's default, set on `SqliteSaver`'s connection too: better-sqlite3 opens WAL databases with `NORMAL`, where a commit can be lost at a power failure), as both PostgreSQL savers do with the server's defaults. A thread is seeded to the given number of turns through each saver, then one turn is timed, the savers interleaved (medians). Bytes: what the thread takes where it is stored, after the timed turns too (the turns column), measured after `VACUUM` (SQLite: the file; PostgreSQL: tables with their indexes and TOAST). Targets: bytes at 1,000 turns ≤ 0.1× `SqliteSaver`'s; turn latency ≤ 1.0× LangGraph's saver at every size.\n",
    table(
      ["seeded turns", "engine", "saver", "turn", "turn ÷ LangGraph's", "turns stored", "bytes", "bytes ÷ LangGraph's"],
      rows.map((row) => {
        const base = row.saver === "MemoriaSaver" ? theirs(row.seeded, row.engine) : undefined;
        return [
          row.seeded,
          ENGINE_NAMES[row.engine as keyof typeof ENGINE_NAMES],
          row.saver,
          formatMs(row.turn),
          base ? ratio(row.turn, base.turn) : "",
          row.turns,
          formatBytes(row.bytes),
          base && row.bytes !== undefined ? ratio(row.bytes, base.bytes) : "",
        ];
      }),
    ),
  ];
}
