import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HistoryStore } from "@memoria/core";
import { encryptStore, fileKeyVault, redactStore } from "@memoria/privacy";
import { createRedisStore } from "@memoria/redis";
import { createSqliteStore } from "@memoria/sql";
import { collectGarbage, interleaveBlocks, median } from "./measure.js";
import { type Side, memoriaSide } from "./systems.js";
import type { Settings } from "./workloads.js";

export interface PrivacyCost {
  store: string;
  variant: string;
  turn: number;
  read: number;
  /** A turn with the default strategy, which reads the whole history. */
  turnWhole: number;
  /** `store.read(key)`: the whole session. */
  readWhole: number;
  /** This variant's turn ÷ the plain store's turn. */
  turnRatio: number;
}

/** Rounds of blocks of 20 turns per variant (the report says how many). */
export const privacyRounds = (settings: { quick: boolean }) => (settings.quick ? 1 : 8);

/**
 * W7: what privacy costs a turn. The same store plain, encrypted (AES-256-GCM,
 * a data key per session), encrypted with hashed ids, and redacted then
 * encrypted, and encrypted with per-scope keys in a file vault (crypto-shredding;
 * the bench's keys have only a session id, so the scope field is that: one vault
 * key per session, the most vault reads there can be); a turn with a 20-message window
 * and a read of the last 20 on a session of `size` messages, then a whole-history turn
 * and a whole read, each interleaved in blocks so the variants share the machine's drift.
 */
export async function privacyCost(redisUrl: string, settings: Settings, size = 1_000): Promise<PrivacyCost[]> {
  const keys = { keys: { A: randomBytes(32) }, activeKeyId: "A" };
  const dir = mkdtempSync(join(tmpdir(), "memoria-bench-privacy-"));
  const vault = fileKeyVault(join(dir, "vault"));
  const variants = (make: () => HistoryStore): [string, HistoryStore][] => [
    ["plain", make()],
    ["encrypted", encryptStore(make(), keys)],
    ["encrypted, per-user keys", encryptStore(make(), { ...keys, scopeKeys: { field: "sessionId", vault } })],
    ["encrypted, hashed ids", encryptStore(make(), { ...keys, hashIds: { secret: randomBytes(32) } })],
    ["redacted + encrypted", redactStore(encryptStore(make(), keys))],
  ];
  const stores: [string, [string, HistoryStore][]][] = [
    ["sqlite", variants(() => createSqliteStore({ path: join(dir, "privacy.db") }))],
    ["redis", variants(() => createRedisStore({ url: redisUrl, keyPrefix: "bench-privacy:" }))],
  ];
  const rows: PrivacyCost[] = [];
  try {
    for (const [store, list] of stores) {
      // Seeded through each variant itself: an encrypted session holds sealed records.
      const sides: [string, Side][] = list.map(([variant, s]) => [variant, memoriaSide(s, { turnSize: 2 })]);
      // One session per variant: they share a database.
      const session = (variant: string) => `w7-${tag}-${variant.replace(/\W+/g, "-")}`;
      const tag = crypto.randomUUID().slice(0, 8);
      for (const [variant, side] of sides) await side.seed(session(variant), size);
      collectGarbage();
      const blocks = privacyRounds(settings);
      const turns = await interleaveBlocks(Object.fromEntries(sides.map(([name, side]) => [name, () => side.turn(session(name))])), blocks, 20);
      const reads = await interleaveBlocks(Object.fromEntries(sides.map(([name, side]) => [name, () => side.readLast20(session(name))])), blocks, 20);
      const wholeTurns = await interleaveBlocks(Object.fromEntries(sides.map(([name, side]) => [name, () => side.turnWhole(session(name))])), blocks, 20);
      const wholeReads = await interleaveBlocks(Object.fromEntries(sides.map(([name, side]) => [name, () => side.readAll(session(name))])), blocks, 20);
      const plain = median(turns.plain as number[]);
      for (const [variant] of sides) {
        const turn = median(turns[variant] as number[]);
        const read = median(reads[variant] as number[]);
        rows.push({
          store,
          variant,
          turn,
          read,
          turnWhole: median(wholeTurns[variant] as number[]),
          readWhole: median(wholeReads[variant] as number[]),
          turnRatio: turn / plain,
        });
      }
    }
  } finally {
    await Promise.all(stores.flatMap(([, list]) => list.map(([, s]) => s.close())));
  }
  return rows;
}
