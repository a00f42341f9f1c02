import type { Flatness, LengthPoint, RowKind } from "./latency.js";
import { formatMs, ratio } from "./measure.js";
import { table } from "./report.js";

const SAMPLING =
  "Each store's rows run in a process of its own, so no other store's sessions sit on the heap its samples collect, and no other store's code shares its JIT. Each row's contenders (memoria, LangChain where it has the row, and the bare engine) run interleaved with each other only (each round in a new order from a fixed seed: A B C, C A B, B A C, …), after the server settles (PostgreSQL: `VACUUM ANALYZE` and a checkpoint, so neither runs between samples), a full GC and a second of untimed warm-up rounds (up to 2,000), so each is measured with its code optimized as a running server's would be (whole-history rows at 100,000 messages: one round); a turn appends two messages, so before any turn that would take its session more than 5% past the row's length, the session is cleared and seeded again, untimed (at 10 and 20 messages, before every turn), and a row measures the length it names; no other row's work runs between a row's samples, and where a sample handles the whole history of 1,000 messages or more, it starts after an untimed minor GC, so none pays to collect another's garbage. Medians of the run count given in the header (rows that read 100,000 messages whole: fewer runs).";

const QUICK_SAMPLING =
  "The quick smoke run measures every store in one process, with a twentieth of a second of warm-up per row and 3 runs: its figures are rough (`pnpm bench` without `--quick` runs each store in a process of its own, after a second of warm-up per row).";

const WHAT: Record<RowKind, string> = {
  "turn, whole history":
    "One turn (read, model, save) with the default strategy, which reads the whole history: memoria's default, and the only strategy LangChain's wrapper has. The ceiling is the bare engine doing the same work with nothing around it: it reads the whole session (into LangChain messages), calls the same model with it and the input (through LangChain's `invoke`), and appends the input and the answer durably.",
  "turn, prompt":
    "One turn of the README's quick start: a prompt (a system message, `MessagesPlaceholder(\"history\")`, the question) piped into the model, the wrapper given `inputMessagesKey` and `historyMessagesKey`, with the default strategy (the whole history). LangChain's wrapper reads the history once in this mode (twice without `historyMessagesKey`). The ceiling is the bare engine's whole-history turn, as above.",
  "turn, last 20":
    "One turn with `windowMemory({ k: 10 })`: memoria reads the last 20 messages. LangChain's wrapper cannot window its reads (compare with its whole-history turn above). The ceiling reads the last 20, calls the model and appends two.",
  "read, whole history":
    "`store.read(key)` against LangChain's `getMessages()`; the ceiling fetches every message, parses it and makes it a LangChain message with LangChain's own `mapStoredMessagesToChatMessages` (a history read's result is LangChain messages). LangChain's file history reads a copy it loaded once per process (it never looks at the file again, so it misses other processes' writes): its file rows are in-memory reads.",
  "read, last 20":
    "`store.read(key, { last: 20 })` against LangChain's `getMessages()` and a slice (it can only read everything); the ceiling fetches the last 20 and makes them LangChain messages.",
};

function rowTable(points: LengthPoint[], row: RowKind): string {
  const rows = points.filter((p) => p.row === row);
  const hasLangChain = rows.some((p) => p.langchain !== undefined);
  const header = [
    "store",
    "messages",
    "memoria",
    ...(hasLangChain ? ["LangChain"] : []),
    "ceiling",
    ...(hasLangChain ? ["memoria ÷ LangChain"] : []),
    "memoria ÷ ceiling",
  ];
  return table(
    header,
    rows.map((p) => [
      p.store,
      p.size.toLocaleString("en"),
      formatMs(p.memoria),
      ...(hasLangChain ? [p.langchain === undefined ? "—" : formatMs(p.langchain)] : []),
      p.ceiling === undefined ? "—" : formatMs(p.ceiling),
      ...(hasLangChain ? [ratio(p.memoria, p.langchain)] : []),
      ratio(p.memoria, p.ceiling),
    ]),
  );
}

/** The W2 and W3 sections: one table per kind of row, the flatness table and the chart. */
export function latencySections(points: LengthPoint[], flatness: Flatness[], quick = false): string[] {
  const sampling = quick ? QUICK_SAMPLING : SAMPLING;
  return [
    `## W2: turn latency against session length\n\n${sampling} PostgreSQL runs with the server's defaults (fsync and synchronous_commit on), so every commit reaches the disk; LangChain's PostgreSQL table was given an index on \`session_id\` (it creates none). LangChain's file history keeps every session of a process in one JSON file rewritten on every message; it is measured up to 1,000 messages. MongoDB runs on the wire-compatible test server (no mongod here), whose queries scan the collection, so it stops at 1,000 messages and has no ceiling; LangChain's MongoDB history cannot run there (it appends with \`$push\`). MySQL runs on MariaDB as started by \`@memoria/testkit/servers\` with InnoDB's defaults (a commit is flushed), in the full run only; LangChain.js has no MySQL history. memoria's server-store turn also takes and releases the cross-process turn lock: PostgreSQL 2 round trips (one query takes the lock and reads, one statement appends and releases; counted in \`packages/sql/test/postgres-turn.test.ts\`), Redis 2 round trips (one script takes the lock and reads; counted in \`packages/redis/test/redis-specific.test.ts\`).\n`,
    `### Default strategy (whole history)\n\n${WHAT["turn, whole history"]}\n`,
    rowTable(points, "turn, whole history"),
    `\n### A prompt with historyMessagesKey (whole history)\n\n${WHAT["turn, prompt"]}\n`,
    rowTable(points, "turn, prompt"),
    `\n### A window of 20\n\n${WHAT["turn, last 20"]}\n`,
    rowTable(points, "turn, last 20"),
    `\n## W3: reads against session length\n\n${sampling}\n\n### The whole history\n\n${WHAT["read, whole history"]}\n`,
    rowTable(points, "read, whole history"),
    `\n### The last 20 messages\n\n${WHAT["read, last 20"]}\n`,
    rowTable(points, "read, last 20"),
    "\n### Flatness: memoria's largest session against its smallest, measured alone\n\nEach store's smallest and largest sessions interleaved with each other only (turns with a window of 20, and reads of the last 20); 1.00× is perfectly flat.\n",
    table(
      ["store", "sessions compared", "turn: largest ÷ smallest", "read last 20: largest ÷ smallest"],
      flatness.map((f) => [f.store, `${f.large.toLocaleString("en")} vs ${f.small} messages`, `${f.turn.toFixed(2)}×`, `${f.read.toFixed(2)}×`]),
    ),
    "",
    "![memoria against LangChain and against the bare engine](latency.svg)",
  ];
}
