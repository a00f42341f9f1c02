// One W1 contender in a process of its own: `wrapper-worker.ts <contender> <sessions> <turns>`.
// Each "run" message runs the workload once and answers with the milliseconds it took.
import { type W1Contender, wrapperWorkload } from "./wrapper-cost.js";

const [name, sessions, turns] = process.argv.slice(2);
const workload = wrapperWorkload(name as W1Contender, Number(sessions), Number(turns));
process.on("message", async () => {
  const start = performance.now();
  await workload();
  process.send?.(performance.now() - start);
});
process.send?.("ready");
