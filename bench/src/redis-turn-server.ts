/**
 * What a Redis turn costs the server, against the bare engine's turn (W2's ceiling):
 * the time the server spends in each command (`SLOWLOG` with every command logged:
 * a script's own calls are logged beside the script, and included in its time), and
 * the bytes each turn adds to the append-only file. Whole-history turns on a session
 * kept at 10 messages (an `LTRIM` between turns, untimed), as W2's 10-message row;
 * each command arrives after a whole turn's work elsewhere, so it runs on a server
 * whose caches that work cooled, as in the bench. Medians; asserts nothing.
 *
 *   pnpm --filter @memoria/bench redis-turn-server [turns]   # 1,000 turns by default
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { startRedis } from "@memoria/testkit/servers";
import { Redis } from "ioredis";
import { median } from "./measure.js";
import { redisKind } from "./systems.js";

const TURNS = Number(process.argv[2] ?? 1_000);
const redis = await startRedis(["--appendfsync", "everysec"]);
const kind = redisKind(redis.url);
const bare = kind.bare as NonNullable<typeof kind.bare>;
const admin = new Redis(redis.url);

/** The bytes of the server's append-only files (their incremental parts). */
function aofBytes(dir = redis.dir): number {
  let bytes = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) if (name.endsWith(".incr.aof")) bytes += statSync(join(dir, name)).size;
  return bytes;
}
const settled = () => new Promise((resolve) => setTimeout(resolve, 1_100)); // appendfsync everysec

const sides = [
  { name: "memoria", list: "bench:{sessionId=s}:m", side: kind.memoria, turn: () => kind.memoria.turnWhole("s") },
  { name: "bare engine", list: "bare:s", side: bare, turn: () => bare.turn("s") },
];
try {
  await admin.config("SET", "slowlog-max-len", String(64 * TURNS));
  for (const { name, list, side, turn } of sides) {
    await side.seed("s", 10);
    const tenMessagesTurn = async () => {
      await admin.ltrim(list, 0, 9);
      await turn();
    };
    for (let i = 0; i < 200; i++) await tenMessagesTurn(); // scripts loaded, code warm
    await admin.config("SET", "slowlog-log-slower-than", "0");
    await admin.slowlog("RESET");
    for (let i = 0; i < TURNS; i++) await tenMessagesTurn();
    await admin.config("SET", "slowlog-log-slower-than", "-1");
    const log = (await admin.slowlog("GET", 64 * TURNS)) as [number, number, number, string[]][];
    const times = new Map<string, number[]>();
    for (const [, , micros, args] of log) {
      const [command = "", sha = "", keyCount = ""] = args;
      if (command === "ltrim" || command === "slowlog" || command === "config") continue;
      // memoria's two scripts told apart by their key count: the lock and read takes 2 keys.
      const label = command === "evalsha" ? (keyCount === "2" ? "script: lock and read" : `script: append (${sha.slice(0, 7)})`) : command;
      times.set(label, [...(times.get(label) ?? []), micros]);
    }
    await settled();
    const before = aofBytes();
    for (let i = 0; i < 200; i++) await tenMessagesTurn();
    await settled();
    const perTurn = (aofBytes() - before) / 200 - `*4\r\n$5\r\nltrim\r\n$${list.length}\r\n${list}\r\n$1\r\n0\r\n$1\r\n9\r\n`.length;
    console.log(`${name}: ${perTurn.toFixed(0)} append-only-file bytes a turn`);
    for (const [label, micros] of times) console.log(`  ${label}: ${(micros.length / TURNS).toFixed(0)} a turn, median ${median(micros)} µs`);
  }
} finally {
  await Promise.all([kind.memoria.close(), bare.close(), kind.langchain?.close(), admin.quit()]);
  await redis.stop();
}
