/**
 * Where a file store turn's time goes, phase by phase, as the wrapper makes a turn:
 * take the turn lock, read the last 20 messages, append the question and answer
 * (fsync'd) under the lock, release it. Beside it, the bare engine's part: the same
 * line appended to a file opened for appending, fsync'd, closed. One process, one
 * session of chat-length messages, medians of 15 rounds of 40 turns after one untimed
 * round; asserts nothing.
 *
 *   pnpm --filter @memoria/bench file-turn             # in the system's temp folder
 *   pnpm --filter @memoria/bench file-turn /some/disk  # elsewhere
 */
import { mkdtempSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { createFileStore } from "@memoria/file";
import { median } from "./measure.js";

const PHASES = ["lock", "read", "append", "release"] as const;
const ROUNDS = 15;
const TURNS = 40;
const text = (i: number) => `message ${i}: ${"a chat-length sentence about plans, places and people, ".repeat(3)}`;

const dir = mkdtempSync(join(process.argv[2] ?? tmpdir(), "memoria-bench-file-turn-"));
const store = createFileStore({ directory: join(dir, "memoria") });
const key = { sessionId: "turns" };
const now = () => performance.now();
try {
  for (let i = 0; i < 20; i += 2) await store.append(key, [new HumanMessage(text(i)), new AIMessage(text(i + 1))]);
  const samples: Record<(typeof PHASES)[number] | "bare", number[]> = { lock: [], read: [], append: [], release: [], bare: [] };
  const bareFile = join(dir, "bare.jsonl");
  const line = Buffer.from(`${JSON.stringify([text(0), text(1)])}\n`);
  let n = 20;
  for (let round = 0; round <= ROUNDS; round++) {
    const sums = { lock: 0, read: 0, append: 0, release: 0, bare: 0 };
    for (let turn = 0; turn < TURNS; turn++) {
      const a = now();
      const opened = await store.openTurn(key);
      const b = now();
      await store.read(key, { last: 20 });
      const c = now();
      await opened.save([new HumanMessage(text(n)), new AIMessage(text(n + 1))], { last: true });
      n += 2;
      const d = now();
      await opened.release();
      const e = now();
      const handle = await open(bareFile, "a", 0o600);
      await handle.write(line);
      await handle.sync();
      await handle.close();
      const f = now();
      Object.assign(sums, {
        lock: sums.lock + b - a,
        read: sums.read + c - b,
        append: sums.append + d - c,
        release: sums.release + e - d,
        bare: sums.bare + f - e,
      });
    }
    if (round > 0) for (const phase of Object.keys(sums) as (keyof typeof sums)[]) samples[phase].push((sums[phase] / TURNS) * 1000);
  }
  const us = (values: number[]) => `${median(values).toFixed(0)} µs`;
  const turn = PHASES.reduce((sum, phase) => sum + median(samples[phase]), 0);
  console.log("| lock | read last 20 | append (fsync'd) | release | turn | bare fsync'd append |\n| --- | --- | --- | --- | --- | --- |");
  console.log(`| ${PHASES.map((phase) => us(samples[phase])).join(" | ")} | ${turn.toFixed(0)} µs | ${us(samples.bare)} |`);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
