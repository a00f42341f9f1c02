/**
 * The positions of the `k` best of `count` candidates, best first, without sorting
 * them all: `ahead(i, j)` says whether candidate i goes before candidate j (of two
 * neither of which is ahead, the first seen stays ahead); `skip(i)` leaves one out.
 * What `topK` and an index's exact scan (`HeldRecallItems.nearest`) both keep by.
 */
export function bestPositions(count: number, k: number, ahead: (i: number, j: number) => boolean, skip?: (i: number) => boolean): number[] {
  const best: number[] = [];
  if (k <= 0) return best;
  for (let i = 0; i < count; i++) {
    if (skip?.(i)) continue;
    if (best.length === k && !ahead(i, best[k - 1] as number)) continue;
    let at = best.length < k ? best.length : k - 1;
    while (at > 0 && ahead(i, best[at - 1] as number)) {
      best[at] = best[at - 1] as number;
      at--;
    }
    best[at] = i;
  }
  return best;
}

/**
 * Keeps the `k` best of scored entries without sorting them all. Among equal scores
 * the first seen stays ahead, unless `tie` says otherwise (negative: `a` goes first).
 */
export function topK<T extends { score: number }>(entries: Iterable<T>, k: number, tie?: (a: T, b: T) => number): T[] {
  const all = Array.isArray(entries) ? (entries as T[]) : [...entries];
  const ahead = (i: number, j: number) => {
    const a = all[i] as T;
    const b = all[j] as T;
    return a.score > b.score || (a.score === b.score && tie !== undefined && tie(a, b) < 0);
  };
  return bestPositions(all.length, k, ahead).map((i) => all[i] as T);
}

/*
 * A memory turn's code runs once per turn, after a person's pause: cold. On the path
 * of every turn, loops stand in for builtins such as `sort`, `flatMap` and
 * `Object.entries`, each of which cost 10-25 µs there, many times its warm cost
 * (bench/results/what-was-tried.md).
 */

/** `items` sorted in place by `order`, stably: by insertion for the dozen items a turn sorts, by `sort` past 32. */
export function sortedFew<T>(items: T[], order: (a: T, b: T) => number): T[] {
  if (items.length > 32) return items.sort(order);
  for (let i = 1; i < items.length; i++) {
    const item = items[i] as T;
    let at = i;
    while (at > 0 && order(items[at - 1] as T, item) > 0) {
      items[at] = items[at - 1] as T;
      at--;
    }
    items[at] = item;
  }
  return items;
}
