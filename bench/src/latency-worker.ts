// W2/W3 for one store in a process of its own: `latency-worker.ts <store>`, with the
// settings and server addresses in MEMORIA_BENCH_LATENCY (JSON). Log lines and the
// result go to the parent as messages: { log } for each line, then { result }.
import { type LatencyJob, closeKind, openKind } from "./latency-processes.js";
import { latencyBySize } from "./latency.js";

const job = JSON.parse(process.env.MEMORIA_BENCH_LATENCY as string) as LatencyJob;
const kind = await openKind(process.argv[2] as string, job.urls);
try {
  const result = await latencyBySize([kind], job.settings, (line) => process.send?.({ log: line }));
  process.send?.({ result });
} finally {
  await closeKind(kind);
}
// The parent disconnects once it has the result; an open handle left by a store must not keep this process alive.
process.disconnect?.();
