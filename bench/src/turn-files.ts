/**
 * `pnpm --filter @memoria/bench turn-files`: the source files of memoria that one
 * default turn on SQLite runs code in (a warm turn: the wrapper with the whole
 * history, a file on disk, a model that answers at once), each with how many of its
 * functions ran, and the session-key functions called with their counts. Taken with
 * V8's precise coverage over that one turn, the packages loaded from their sources
 * (from-sources/). MEMORIA_ROOT=<a checkout> measures another commit's sources.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { RunnableWithMessageHistory } from "@memoria/core";
import { createSqliteStore } from "@memoria/sql";

const dir = mkdtempSync(join(tmpdir(), "memoria-turn-files-"));
const store = createSqliteStore({ path: join(dir, "history.db") });
const chain = new RunnableWithMessageHistory({ runnable: RunnableLambda.from((messages: BaseMessage[]) => new AIMessage(`saw ${messages.length}`)), store });
const config = { configurable: { sessionId: "s" } };
for (let i = 0; i < 50; i++) await chain.invoke(`warm-up ${i}`, config);

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
await session.post("Profiler.takePreciseCoverage"); // taking it resets the counts
await chain.invoke("the measured turn", config);
const { result } = await session.post("Profiler.takePreciseCoverage");
session.disconnect();

const files = new Map<string, number>();
const keyCalls: string[] = [];
for (const script of result) {
  const path = decodeURIComponent(script.url.replace("file://", ""));
  const at = path.indexOf("/packages/");
  if (at < 0 || !path.includes("/src/") || path.includes("/node_modules/")) continue;
  const ran = script.functions.filter((fn) => (fn.ranges[0]?.count ?? 0) > 0);
  if (ran.length === 0) continue;
  files.set(path.slice(at + 1), ran.length);
  if (path.endsWith("/session-key.ts")) for (const fn of ran) if (fn.functionName) keyCalls.push(`${fn.functionName} ×${fn.ranges[0]?.count}`);
}
for (const [file, functions] of [...files].sort()) console.log(`${String(functions).padStart(3)}  ${file}`);
console.log(`${files.size} source files; session key: ${keyCalls.join(", ")}`);
await store.close();
rmSync(dir, { recursive: true, force: true });
