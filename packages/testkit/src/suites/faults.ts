import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type HistoryStore, RunnableWithMessageHistory } from "@memoria/core";
import { RunnableLambda } from "@langchain/core/runnables";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultCounts, FaultLedger, describeCounts } from "../fault-ledger.js";
import type { FaultSuiteSetup, FaultyServer } from "../types.js";
import { type SoakWindow, runSoak } from "../soak.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ZERO = { lost: 0, duplicated: 0, misordered: 0, stale: 0, storedButRejected: 0, untypedErrors: 0 };
/** Store calls time out after this in the fault scenarios, so a hung server fails turns quickly. */
const OPERATION_TIMEOUT_MS = 1_000;
const WRITER = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "../fault-writer.ts" : "./fault-writer.js", import.meta.url));

function expectClean(scenario: string, counts: FaultCounts): void {
  console.log(describeCounts(scenario, counts));
  expect({ ...counts, turns: undefined, failedCalls: undefined }).toEqual({ ...ZERO, turns: undefined, failedCalls: undefined });
}

/** Lines a child process prints, as a promise for the first that matches. */
function lineFrom(child: ChildProcess, match: (line: string) => boolean, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    let errors = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-4_000);
    });
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      const found = lines.find(match);
      if (found !== undefined) {
        child.stdout?.off("data", onData);
        resolve(found);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`the writer exited (${code}) before ${what}: ${errors}`)));
  });
}

/**
 * Production's faults against a real server of the store's kind, each on a
 * dedicated server the scenario may break: a restart, a kill -9, a hung server
 * (SIGSTOP), terminated connections, a writer process killed mid-turn, and a turn
 * that outlives its lock while its process is frozen. Each scenario counts lost,
 * duplicated, misordered, stale and stored-but-rejected turns and requires 0 of
 * each, with every failed call a typed error; the counts are printed.
 */
export function faultSuite(setup: FaultSuiteSetup): void {
  describe(`${setup.name}: faults`, () => {
    let server: FaultyServer | undefined;
    const stores: HistoryStore[] = [];
    beforeAll(async () => {
      server = await setup.start();
    });
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close().catch(() => undefined)));
      await server?.stop();
    });
    const target = () => {
      if (!server) throw new Error(`${setup.name}: the server did not start (see the beforeAll error above)`);
      return server;
    };
    const open = async () => {
      const store = await setup.createStore(target().url, { operationTimeoutMs: OPERATION_TIMEOUT_MS });
      stores.push(store);
      return store;
    };

    /** Two writers on two store instances, `turns` turns each, with `fault` injected before writer 0's turn 4. */
    async function underFault(scenario: string, fault: (s: FaultyServer) => Promise<void>, turns = 12): Promise<FaultCounts> {
      const ledger = new FaultLedger(`${scenario}-${crypto.randomUUID()}`);
      const [a, b] = [await open(), await open()];
      let injected: Promise<void> | undefined;
      await Promise.all([
        ledger.write(a, 0, turns, (i) => {
          if (i === 4) injected = fault(target());
        }),
        ledger.write(b, 1, turns, async () => {
          await sleep(20);
        }),
      ]);
      await injected;
      return ledger.count(await a.read({ sessionId: ledger.sessionId }));
    }

    // `surfaces`: the fault must fail some calls (a freeze longer than the timeout does);
    // clients may ride out the others by reconnecting and resending, which is fine.
    const scenarios: [name: string, needs: keyof FaultyServer, fault: (s: FaultyServer) => Promise<void>, surfaces?: true][] = [
      ["server restarted mid-run", "restart", (s) => s.restart!()],
      ["server killed with SIGKILL mid-run, then started again", "crash", (s) => s.crash!()],
      [
        "server hung (SIGSTOP) for twice the operation timeout",
        "pause",
        async (s) => {
          s.pause!();
          await sleep(2 * OPERATION_TIMEOUT_MS);
          s.resume!();
        },
        true,
      ],
      [
        "every connection terminated by the server, three times",
        "terminateConnections",
        async (s) => {
          for (let i = 0; i < 3; i++) {
            await s.terminateConnections!();
            await sleep(150);
          }
        },
      ],
    ];
    for (const [name, needs, fault, surfaces] of scenarios) {
      it(`${name}: no turn lost, duplicated, misordered, stale or stored-but-rejected`, async (context) => {
        if (!target()[needs]) return context.skip(setup.skip?.[needs] ?? `${setup.name} has no server to ${needs}`);
        const counts = await underFault(needs, fault);
        expectClean(`${setup.name}, ${name}`, counts);
        if (surfaces) expect(counts.failedCalls, "the fault failed no call: was it injected?").toBeGreaterThan(0);
      }, 180_000);
    }

    it("server killed with SIGKILL six times at random moments of one run: no turn lost, duplicated, misordered, stale or stored-but-rejected", async (context) => {
      if (!target().crash) return context.skip(setup.skip?.crash ?? `${setup.name} has no server to crash`);
      const sixCrashes = async (s: FaultyServer) => {
        for (let k = 0; k < 6; k++) {
          await sleep(Math.random() * 300);
          await s.crash!();
        }
      };
      expectClean(`${setup.name}, six kills at random moments`, await underFault("six-kills", sixCrashes, 40));
    }, 300_000);

    it("a writer process killed mid-turn: its stored turns are whole, and the next writer goes on at once", async (context) => {
      if (!setup.storeModule) return context.skip(`${setup.name} gives no store module for child processes`);
      const sessionId = `killed-${crypto.randomUUID()}`;
      const child = spawn(process.execPath, ["--import", "tsx", WRITER, setup.storeModule, target().url, sessionId, "forever"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      await lineFrom(child, (line) => line === "turn 5", "its sixth turn");
      await sleep(Math.random() * 50);
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      const store = await open();
      const ledger = new FaultLedger(sessionId);
      await ledger.write(store, 0, 3);
      const stored = await store.read({ sessionId });
      const childTurns = stored.filter((m) => String(m.content).startsWith("c-") && m.getType() === "human").length;
      expect(childTurns).toBeGreaterThanOrEqual(6);
      // The child's turns are whole and first, in order; the writer's follow, each seeing all before it.
      const childPart = stored.slice(0, 2 * childTurns).map((m) => String(m.content));
      expect(childPart).toEqual(Array.from({ length: childTurns }, (_, i) => [`c-${i}`, `c-${i} saw ${2 * i + 1} #1`]).flat());
      expectClean(`${setup.name}, writer killed mid-turn`, ledger.count(stored));
    }, 120_000);

    it("sustained load: 3 worker processes on 4 shared sessions, the server restarted and a worker killed with SIGKILL in the middle: no turn lost, doubled or misordered, descriptors flat", async (context) => {
      if (!setup.storeModule) return context.skip(`${setup.name} gives no store module for child processes`);
      const server = target();
      const reader = await open();
      await reader.ready(); // the schema made once, before the workers race to open it
      const report = await runSoak({
        storeModule: setup.storeModule,
        target: server.url,
        workers: 3,
        sessions: 4,
        durationMs: 12_000,
        windows: 4,
        prefix: `soak-${crypto.randomUUID()}`,
        startTimeoutMs: 90_000, // a loaded machine (the whole suite at once) takes its time to load the workers' modules
        restart: server.restart && (() => (server.restart as () => Promise<void>)()),
        read: (sessionId) => reader.read({ sessionId }),
      });
      // The first window the workers reported in (they take a moment to start), and the last.
      const first = report.windows.find((w) => w.fds > 0);
      const last = report.windows.at(-1) as SoakWindow;
      if (!first) throw new Error(`no soak worker reported its descriptors in ${report.windows.length} windows (${report.turns} turns)`);
      console.log(
        `${setup.name}, soak: ${report.turns} turns (${report.throughput.toFixed(0)}/s), faults ${report.faults.join(" + ")}, ${report.failedCalls} failed calls retried; ` +
          `p99 ${first.p99.toFixed(1)} → ${last.p99.toFixed(1)} ms, descriptors ${first.fds} → ${last.fds}; lost ${report.lost}, doubled ${report.doubled}, misordered ${report.misordered}`,
      );
      expect(report.faults).toEqual(server.restart ? ["restart", "kill"] : ["kill"]);
      expect(report.turns).toBeGreaterThan(0);
      expect({ lost: report.lost, doubled: report.doubled, misordered: report.misordered, untypedErrors: report.untypedErrors }).toEqual({
        lost: 0,
        doubled: 0,
        misordered: 0,
        untypedErrors: 0,
      });
      // A leak of a descriptor per turn, or per retried call, would grow past this; a pool filling up does not.
      expect(last.fds, "open descriptors grew over the run").toBeLessThanOrEqual(first.fds + 10);
    }, 240_000);

    it("a turn that outlives its lock (its process frozen past the lease) is refused when it saves; the turn that took over is kept", async (context) => {
      if (!setup.storeModule) return context.skip(`${setup.name} gives no store module for child processes`);
      const sessionId = `outlived-${crypto.randomUUID()}`;
      const ttlMs = 600;
      const child = spawn(process.execPath, ["--import", "tsx", WRITER, setup.storeModule, target().url, sessionId, "one-long-turn", String(ttlMs)], {
        stdio: ["pipe", "pipe", "pipe"],
      });
      const result = lineFrom(child, (line) => line.startsWith("{"), "its result");
      await lineFrom(child, (line) => line === "inside", "its model call");
      child.kill("SIGSTOP");
      await sleep(2 * ttlMs);
      const store = await open();
      const chain = new RunnableWithMessageHistory({ store, runnable: RunnableLambda.from(() => "took over") });
      await chain.invoke("meanwhile", { configurable: { sessionId } });
      child.kill("SIGCONT");
      child.stdin?.write("go\n");
      expect(JSON.parse(await result)).toEqual({ resolved: false, code: "SAVE_FAILED", cause: "LOCK_LOST", outcome: "not-stored" });
      expect((await store.read({ sessionId })).map((m) => m.content)).toEqual(["meanwhile", "took over"]);
    }, 60_000);
  });
}
