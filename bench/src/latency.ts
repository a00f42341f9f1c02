import { collectGarbage, interleave, median } from "./measure.js";
import type { Side, StoreKind } from "./systems.js";
import type { Settings } from "./workloads.js";

/** What one row measures. */
export type RowKind = "turn, whole history" | "turn, prompt" | "turn, last 20" | "read, whole history" | "read, last 20";
export const ROW_KINDS: RowKind[] = ["turn, whole history", "turn, prompt", "turn, last 20", "read, whole history", "read, last 20"];

/** One row: medians in ms of memoria, LangChain (where it has the row) and the bare engine. */
export interface LengthPoint {
  store: string;
  size: number;
  row: RowKind;
  memoria: number;
  langchain?: number;
  ceiling?: number;
}

export interface Flatness {
  store: string;
  small: number;
  large: number;
  /** Turn and read medians at the largest size over those at the smallest. */
  turn: number;
  read: number;
}

/** W2/W3 figures: one point per store, size and row; flatness per store. */
export type LatencyResult = { points: LengthPoint[]; flatness: Flatness[] };

/**
 * The contenders of one row. memoria's default strategy reads the whole history,
 * as LangChain's wrapper does; with a window of 20 it reads the last 20. LangChain
 * cannot window its reads: its whole-history turn is the only turn it has, so the
 * window row has no LangChain column (compare it with the whole-history row).
 */
function contenders(kind: StoreKind, row: RowKind, turnId: string, readId: string, langchain: Side | undefined) {
  const ours = kind.memoria;
  const bare = kind.bare;
  const entries: [string, () => Promise<unknown>][] = [];
  switch (row) {
    case "turn, whole history":
      entries.push(["memoria", () => ours.turnWhole(`t-${turnId}`)]);
      if (langchain) entries.push(["langchain", () => langchain.turn(`t-${turnId}`)]);
      if (bare) entries.push(["ceiling", () => bare.turn(`t-${turnId}`)]);
      break;
    case "turn, prompt":
      entries.push(["memoria", () => ours.turnPrompt(`t-${turnId}`)]);
      if (langchain) entries.push(["langchain", () => langchain.turnPrompt(`t-${turnId}`)]);
      if (bare) entries.push(["ceiling", () => bare.turn(`t-${turnId}`)]);
      break;
    case "turn, last 20":
      entries.push(["memoria", () => ours.turn(`t-${turnId}`)]);
      if (bare) entries.push(["ceiling", () => bare.turn(`t-${turnId}`, 20)]);
      break;
    case "read, whole history":
      entries.push(["memoria", () => ours.readAll(`r-${readId}`)]);
      if (langchain) entries.push(["langchain", () => langchain.readAll(`r-${readId}`)]);
      if (bare) entries.push(["ceiling", () => bare.read(`r-${readId}`)]);
      break;
    case "read, last 20":
      entries.push(["memoria", () => ours.readLast20(`r-${readId}`)]);
      if (langchain) entries.push(["langchain", () => langchain.readLast20(`r-${readId}`)]);
      if (bare) entries.push(["ceiling", () => bare.read(`r-${readId}`, 20)]);
      break;
  }
  return Object.fromEntries(entries);
}

/** What a contender needs to put its session back to a length. */
interface Reseedable {
  seed(sessionId: string, count: number): Promise<void>;
  clear(sessionId: string): Promise<void>;
}

/**
 * Untimed work before each turn of a turn row. A turn appends two messages, and a
 * second of warm-up runs hundreds of turns, so a session seeded with 10 messages
 * would be measured at hundreds. Each contender's session is put back to `size`
 * (cleared and seeded again) before any turn that would take it more than 5% past
 * it: before every turn at 10 and 20 messages, every 25th at 1,000.
 */
function keptAtLength(size: number, sessionId: string, sides: Record<string, Reseedable | undefined>): Record<string, () => Promise<void>> {
  const turnsPerSeed = Math.max(1, Math.floor((size * 0.05) / 2));
  const before: Record<string, () => Promise<void>> = {};
  for (const [name, side] of Object.entries(sides)) {
    if (!side) continue;
    let turns = 0;
    before[name] = async () => {
      if (turns === turnsPerSeed) {
        await side.clear(sessionId);
        await side.seed(sessionId, size);
        turns = 0;
      }
      turns++;
    };
  }
  return before;
}

/**
 * W2 (turns) and W3 (reads) per store and session length. Each row's contenders
 * (memoria, LangChain, the bare engine) run interleaved with each other only, after
 * the server settling (PostgreSQL: VACUUM ANALYZE and a checkpoint), a full GC and a
 * second of warm-up rounds (one round for whole-history rows at 100,000 messages): no other row's work (LangChain's 100,000-message reads, say) runs
 * between a row's samples. Then, per store, memoria's smallest and largest sessions
 * are interleaved with each other alone (flatness).
 */
export async function latencyBySize(kinds: StoreKind[], settings: Settings, log: (line: string) => void): Promise<LatencyResult> {
  const points: LengthPoint[] = [];
  const flatness: Flatness[] = [];
  for (const kind of kinds) {
    const tags = new Map<number, string>();
    const maxSize = (settings.quick ? kind.quickMaxSize : undefined) ?? kind.maxSize ?? Number.POSITIVE_INFINITY;
    const sizes = settings.sizes.filter((size) => size <= maxSize);
    for (const size of sizes) {
      const tag = `${size}-${crypto.randomUUID().slice(0, 8)}`;
      tags.set(size, tag);
      const maxSeed = (settings.quick ? kind.langchain?.quickMaxSeed : undefined) ?? kind.langchain?.maxSeed ?? Number.POSITIVE_INFINITY;
      const langchain = size <= maxSeed ? kind.langchain : undefined;
      for (const seeder of [kind.memoria, langchain, kind.bare]) {
        await seeder?.seed(`t-${tag}`, size);
        await seeder?.seed(`r-${tag}`, size);
      }
      // Fewer runs where a whole history of 100,000 messages is read per sample.
      const large = size >= 100_000;
      for (const row of ROW_KINDS) {
        const whole = row.endsWith("whole history");
        const runs = large && whole ? Math.max(5, Math.round(settings.runs / 3)) : settings.runs;
        await kind.settle?.(); // nor is the server's work after the seeding and the previous row
        collectGarbage(); // the previous row's garbage is not this row's business
        // Warm-up lets V8 optimize each contender's code, as a server's would be: a
        // sample of code still interpreted measures the JIT, not the path.
        // Where a sample makes thousands of messages, each starts with an empty young
        // generation, so none pays to collect another's. (Not for small rows: there the
        // collection itself, just before, would be most of what a sample measures.)
        const youngGcFirst = whole && size >= 1_000;
        const before = row.startsWith("turn") ? keptAtLength(size, `t-${tag}`, { memoria: kind.memoria, langchain, ceiling: kind.bare }) : undefined;
        const samples = await interleave(contenders(kind, row, tag, tag, langchain), runs, large && whole ? 1 : { rounds: 3, ms: settings.warmupMs }, {
          youngGcFirst,
          before,
        });
        const point: LengthPoint = {
          store: kind.name,
          size,
          row,
          memoria: median(samples.memoria as number[]),
          langchain: samples.langchain ? median(samples.langchain) : undefined,
          ceiling: samples.ceiling ? median(samples.ceiling) : undefined,
        };
        points.push(point);
        log(
          `  ${kind.name} @ ${size.toLocaleString("en")}, ${row}: memoria ${point.memoria.toFixed(3)} ms, LangChain ${point.langchain?.toFixed(3) ?? "—"} ms, ceiling ${point.ceiling?.toFixed(3) ?? "—"} ms`,
        );
      }
    }
    // The smallest session whose last-20 window is full, so both reads return 20 messages.
    const small = Math.min(...sizes.filter((size) => size >= 20));
    const large = Math.max(...sizes);
    if (!(small < large)) continue;
    const [s, l] = [tags.get(small), tags.get(large)];
    collectGarbage();
    const turns = await interleave({ small: () => kind.memoria.turn(`t-${s}`), large: () => kind.memoria.turn(`t-${l}`) }, settings.runs * 4);
    const reads = await interleave({ small: () => kind.memoria.readLast20(`r-${s}`), large: () => kind.memoria.readLast20(`r-${l}`) }, settings.runs * 4);
    const entry = {
      store: kind.name,
      small,
      large,
      turn: median(turns.large as number[]) / median(turns.small as number[]),
      read: median(reads.large as number[]) / median(reads.small as number[]),
    };
    flatness.push(entry);
    log(`  ${kind.name} alone: ${large.toLocaleString("en")} vs ${small} messages: turn ${entry.turn.toFixed(2)}×, read ${entry.read.toFixed(2)}×`);
  }
  return { points, flatness };
}
