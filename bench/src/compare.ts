/**
 * `pnpm --filter @memoria/bench compare [--runs 3] [--baseline FILE] [bench options]`:
 * runs `pnpm bench` (with the options given: --only, --sizes, --stores) `--runs` times
 * into scratch files, then compares each memoria time in them with the committed report
 * (bench/results/latest.md unless --baseline names another). A cell regressed when the
 * median of the fresh runs is slower than the committed figure by more than the spread
 * of those runs themselves ((slowest − fastest) ÷ median, at least 5 %): the build's own
 * noise on this machine, measured in the same sitting. Prints every regressed cell and
 * exits 1 when there is one; timings are never asserted in tests.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "./measure.js";
import { type ReportCell, cellId, reportCells } from "./report-tables.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    baseline: { type: "string" },
    only: { type: "string" },
    sizes: { type: "string" },
    stores: { type: "string" },
  },
});
const runs = Number(values.runs);
if (!Number.isSafeInteger(runs) || runs < 2) throw new Error(`--runs takes a whole number of 2 or more (the spread needs two runs), got ${values.runs}`);
const baselineFile = values.baseline ?? join(import.meta.dirname, "..", "results", "latest.md");
const passOn = (["only", "sizes", "stores"] as const).flatMap((name) => (values[name] === undefined ? [] : [`--${name}`, values[name] as string]));

const scratch = mkdtempSync(join(tmpdir(), "memoria-bench-compare-"));
const fresh: ReportCell[][] = [];
try {
  for (let run = 1; run <= runs; run++) {
    const out = join(scratch, `run-${run}.md`);
    console.error(`compare: run ${run} of ${runs} (pnpm bench ${passOn.join(" ")})`);
    const result = spawnSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "main.ts"), ...passOn, "--out", out], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (result.status !== 0) throw new Error(`pnpm bench failed in run ${run} (exit ${result.status})`);
    fresh.push(reportCells(readFileSync(out, "utf8")));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const baseline = new Map(reportCells(readFileSync(baselineFile, "utf8")).map((cell) => [cellId(cell), cell]));
const byCell = new Map<string, { cell: ReportCell; values: number[] }>();
for (const cells of fresh) {
  for (const cell of cells) {
    // memoria's own times: a LangChain or bare-engine column getting slower is not a regression of memoria's.
    if (!cell.time || !/^memoria/i.test(cell.column)) continue;
    const entry = byCell.get(cellId(cell)) ?? { cell, values: [] };
    entry.values.push(cell.value);
    byCell.set(cellId(cell), entry);
  }
}

const regressed: string[] = [];
let compared = 0;
for (const [id, { cell, values: times }] of byCell) {
  const before = baseline.get(id);
  if (!before || times.length < runs) continue;
  compared++;
  const now = median(times);
  const spread = Math.max(0.05, (Math.max(...times) - Math.min(...times)) / now);
  const ratio = now / before.value;
  if (ratio > 1 + spread) {
    regressed.push(
      `| ${cell.section} | ${cell.row} | ${cell.column} | ${format(before.value)} | ${format(now)} | ${ratio.toFixed(2)} | ${(spread * 100).toFixed(0)} % |`,
    );
  }
}

function format(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(1)} µs` : `${ms.toFixed(ms < 10 ? 2 : 0)} ms`;
}

console.log(`compared ${compared} memoria times of ${runs} fresh runs with ${baselineFile}`);
if (regressed.length === 0) {
  console.log("no row is slower than the committed report by more than the runs' own spread");
} else {
  console.log(`${regressed.length} regressed (fresh median ÷ committed above 1 + the fresh runs' spread):\n`);
  console.log("| section | row | column | committed | fresh (median) | ratio | spread |\n| --- | --- | --- | --- | --- | --- | --- |");
  for (const line of regressed) console.log(line);
  process.exitCode = 1;
}
