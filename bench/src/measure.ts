import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
/** A full garbage collection, run between groups of samples (after seeding, say), never inside one. */
export const collectGarbage = runInNewContext("gc") as () => void;

/**
 * A minor collection (the young generation only), untimed before a sample, so the
 * sample never pays to collect the previous contender's garbage. Unlike a full GC it
 * leaves compiled code alone.
 */
const collectYoung = runInNewContext("() => gc({ type: 'minor' })") as () => void;

/** Milliseconds taken by `body`. */
export async function timed(body: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await body();
  return performance.now() - start;
}

export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Runs each contender `runs` times, interleaved (each round in a new order, A B C,
 * C A B, B C A, A C B, …) so that drift in the machine's speed affects all alike,
 * after `warmup` untimed rounds. Returns each
 * contender's samples in milliseconds. (A full GC before every run was tried and
 * dropped: forced full collections age V8's compiled code and slowed every sample
 * about tenfold, which measures nothing a real program does.)
 */
export async function interleave(
  contenders: Record<string, () => Promise<unknown>>,
  runs: number,
  warmup: number | Warmup = 3,
  options: InterleaveOptions = {},
): Promise<Record<string, number[]>> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  const { rounds, ms } = typeof warmup === "number" ? { rounds: warmup, ms: 0 } : warmup;
  const started = performance.now();
  // Untimed rounds until both the round count and the time are reached (at least one round).
  for (let round = 0; round < Math.max(1, rounds) || (performance.now() - started < ms && round < MAX_WARMUP_ROUNDS); round++) {
    for (const name of names) {
      await options.before?.[name]?.();
      await (contenders[name] as () => Promise<unknown>)();
    }
  }
  const order = shuffler(names.length);
  for (let round = 0; round < runs; round++) {
    // Each round in its own order: no contender always runs first, or always right
    // after the same other and pays to clean up what that one left.
    for (const at of order()) {
      const name = names[at] as string;
      await options.before?.[name]?.();
      if (options.youngGcFirst) collectYoung();
      samples[name]?.push(await timed(contenders[name] as () => Promise<unknown>));
    }
  }
  return samples;
}

export interface InterleaveOptions {
  /** An untimed minor GC before each sample. */
  youngGcFirst?: boolean;
  /** Untimed work before each call of a contender (warm-up and samples alike), by contender name. */
  before?: Record<string, () => Promise<void>>;
}

/** Warm-up before sampling: at least `rounds` rounds, and more until `ms` have passed (up to 2,000 rounds). */
export interface Warmup {
  rounds: number;
  ms: number;
}
const MAX_WARMUP_ROUNDS = 2_000;

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  if (ms < 0.1) return `${(ms * 1000).toFixed(1)} µs`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(0)} ms`;
}

/** A share as a percentage with one decimal; "—" where there is none. */
export function percent(share: number): string {
  return Number.isFinite(share) ? `${(100 * share).toFixed(1)}%` : "—";
}

export function ratio(ours: number, theirs: number | undefined): string {
  if (theirs === undefined || !Number.isFinite(theirs) || theirs === 0) return "—";
  return `${(ours / theirs).toFixed(ours / theirs < 0.1 ? 3 : 2)}`;
}

/**
 * Like {@link interleave}, but in blocks: each contender runs `perBlock` times in a
 * row, then the next, for `blocks` rounds (after one untimed block each), each round in
 * a new order ({@link shuffler}): in one fixed order, a contender always followed the
 * same other one, and its first samples paid for that one's garbage and cold code
 * (W7 had hashed ids "faster" than plain). Drift still reaches all alike, and a
 * contender is measured with its own code warm, as a program that runs only it would
 * be; turn-by-turn alternation of two code paths slows both, the larger one more.
 */
export async function interleaveBlocks(
  contenders: Record<string, () => Promise<unknown>>,
  blocks: number,
  perBlock: number,
): Promise<Record<string, number[]>> {
  const names = Object.keys(contenders);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  const order = shuffler(names.length);
  for (let block = 0; block <= blocks; block++) {
    for (const name of order().map((i) => names[i] as string)) {
      for (let i = 0; i < perBlock; i++) {
        const ms = await timed(contenders[name] as () => Promise<unknown>);
        if (block > 0) samples[name]?.push(ms);
      }
    }
  }
  return samples;
}

/**
 * Successive orders of `n` contenders (indices), each round a new shuffle from a
 * fixed seed, so runs are comparable. A rotation (A B C, B C A, …) was not enough:
 * it keeps who follows whom within a round, so one contender kept paying for the
 * garbage and the collector's work another had left.
 */
export function shuffler(n: number): () => number[] {
  let seed = 0x9e3779b9;
  const random = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return () => {
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    return order;
  };
}
