import type { BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { type HistoryStore, MemoriaError, RunnableWithMessageHistory, type WriteOutcome, writeOutcomeOf } from "@memoria/core";

/** What a fault scenario counts. Every field but `turns` and `failedCalls` must be 0. */
export interface FaultCounts {
  turns: number;
  /** Calls that rejected (each one retried with the same turn id until it resolved). */
  failedCalls: number;
  /** Turns not stored at all. */
  lost: number;
  /** Turns stored more than once. */
  duplicated: number;
  /** Turns of one writer stored out of the order it ran them. */
  misordered: number;
  /** Turns whose model did not see every turn stored before them. */
  stale: number;
  /** Turns stored by an attempt that rejected saying nothing was stored. */
  storedButRejected: number;
  /** Rejections that were not typed memoria errors. */
  untypedErrors: number;
}

interface Rejection {
  question: string;
  attempt: number;
  outcome: WriteOutcome;
  typed: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs writers that take turns on one session through the wrapper, each turn
 * retried with its own turn id (`configurable.turnId`) until it resolves, as an
 * application that follows the documented rule would. The model answers
 * `<question> saw <n> #<attempt>`, so the stored history tells which attempt was
 * stored and what it saw. `beforeTurn` runs before each turn (a scenario injects
 * its fault there).
 */
export class FaultLedger {
  readonly #rejections: Rejection[] = [];
  readonly #questions: string[][] = [];

  constructor(readonly sessionId: string) {}

  /** Writer `w` runs `turns` turns on `store`, sequentially. */
  async write(store: HistoryStore, w: number, turns: number, beforeTurn?: (i: number) => Promise<void> | void, retryForMs = 90_000): Promise<void> {
    const attempts = new Map<string, number>();
    const questions: string[] = [];
    this.#questions[w] = questions;
    const chain = new RunnableWithMessageHistory({
      store,
      lockOptions: { waitMs: 60_000 },
      runnable: RunnableLambda.from(async (messages: BaseMessage[]) => {
        const question = String(messages[messages.length - 1]?.content);
        return `${question} saw ${messages.length} #${attempts.get(question)}`;
      }),
    });
    for (let i = 0; i < turns; i++) {
      await beforeTurn?.(i);
      const question = `w${w}-${i}`;
      questions.push(question);
      const deadline = Date.now() + retryForMs;
      for (let attempt = 1; ; attempt++) {
        attempts.set(question, attempt);
        try {
          await chain.invoke(question, { configurable: { sessionId: this.sessionId, turnId: question } });
          break;
        } catch (error) {
          this.#rejections.push({ question, attempt, outcome: writeOutcomeOf(error), typed: MemoriaError.isInstance(error) });
          if (Date.now() > deadline) throw new Error(`turn ${question} still failing after ${retryForMs} ms`, { cause: error });
          await sleep(50);
        }
      }
    }
  }

  /** Counts what the stored session shows against what the writers ran (turns of other writers are passed over). */
  count(stored: readonly BaseMessage[]): FaultCounts {
    const expected = this.#questions.flat();
    const seen = new Map<string, number>();
    let stale = 0;
    let storedButRejected = 0;
    const order: Record<string, number[]> = {};
    for (let p = 0; p < stored.length; p += 2) {
      const question = String(stored[p]?.content);
      if (!/^w\d+-\d+$/.test(question)) continue;
      seen.set(question, (seen.get(question) ?? 0) + 1);
      const [writer, index] = question.slice(1).split("-").map(Number) as [number, number];
      if (!order[writer]) order[writer] = [];
      order[writer].push(index);
      const answer = /^(.*) saw (\d+) #(\d+)$/.exec(String(stored[p + 1]?.content));
      if (!answer || answer[1] !== question || Number(answer[2]) !== p + 1) stale++;
      const attempt = Number(answer?.[3]);
      if (this.#rejections.some((r) => r.question === question && r.attempt === attempt && r.outcome === "not-stored")) storedButRejected++;
    }
    const misordered = Object.values(order).reduce((sum, indexes) => sum + indexes.filter((n, i) => i > 0 && n <= (indexes[i - 1] as number)).length, 0);
    return {
      turns: expected.length,
      failedCalls: this.#rejections.length,
      lost: expected.filter((q) => !seen.has(q)).length,
      duplicated: [...seen.values()].reduce((sum, n) => sum + n - 1, 0),
      misordered,
      stale,
      storedButRejected,
      untypedErrors: this.#rejections.filter((r) => !r.typed).length,
    };
  }
}

/** One line for the test log: the scenario and its counts. */
export function describeCounts(scenario: string, counts: FaultCounts): string {
  return `${scenario}: ${counts.turns} turns, ${counts.failedCalls} failed calls; lost ${counts.lost}, duplicated ${counts.duplicated}, misordered ${counts.misordered}, stale ${counts.stale}, stored-but-rejected ${counts.storedButRejected}, untyped errors ${counts.untypedErrors}`;
}
