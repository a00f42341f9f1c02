import {
  type HistoryStore,
  type JsonValue,
  MemoriaError,
  type SessionKey,
  type SessionKeyFilter,
  createSessionKey,
  scopeFilterOf,
  scopeKeyOf,
} from "@memoria/core";
import { checkScopeFields } from "@memoria/core/store-kit";

/**
 * The state name a budget's spending is kept under, on the budget's own record of the
 * scope. Not a `memoria.` name: those are `encryptStore`'s own, and it refuses them.
 */
export const BUDGET_STATE = "spend";

/** What one scope has spent on memory work in the current period. */
export interface BudgetSpend {
  /** When the period began (epoch ms). */
  since: number;
  /** When the next one begins (epoch ms): spending starts again from nothing then. */
  until: number;
  /** Model calls made for memory work. */
  calls: number;
  /**
   * Tokens those calls used: what the model reported (`usage_metadata`) where the work
   * keeps the model's message (titles), else an estimate of 4 characters a token of the
   * prompt and the answer (extraction, the profile and summaries read the answer as text
   * or JSON).
   */
  tokens: number;
  /** Calls refused because the budget was spent (the work waits for the next period). */
  refused: number;
  /** Calls and tokens by kind of work (`facts`, `profile`, `summary`, `title`). */
  byWork: Record<string, { calls: number; tokens: number }>;
}

/** What a budget reports of each call it allows or refuses (for metrics: `@memoria/otel`'s `budgetMeter`). */
export interface BudgetEvent {
  work: string;
  outcome: "allowed" | "refused";
  /** Tokens the call used (0 for a refused call, and until an allowed call returns: reported again with them). */
  tokens: number;
}

export interface MemoryBudgetOptions {
  /** The session fields a budget belongs to: `["userId"]` is one budget per user across their conversations. */
  scope: readonly string[];
  /** Model calls of memory work allowed per scope and period. Exact: never one more, across processes. @default no limit */
  calls?: number;
  /**
   * Tokens of memory work per scope and period. A call is allowed while fewer were
   * spent, and its tokens are counted when it returns, so calls already running when
   * the limit is reached can take it past (by their own tokens, no more).
   * @default no limit
   */
  tokens?: number;
  /** The length of a period; periods start at whole multiples of it since the epoch (a day: UTC midnight). @default one day */
  periodMs?: number;
  /** Reports each call allowed or refused (metrics). */
  onSpend?: (event: BudgetEvent) => void;
  /** The clock (tests). @default Date.now */
  now?: () => number;
}

/** A budget for the model calls memory work makes; give it to the strategies that call a model (`budget`). */
export interface MemoryBudget {
  readonly scope: readonly string[];
  /**
   * Runs `call`, one model call of memory work for `session`'s scope, if the budget
   * allows it, and counts it; rejects with `BudgetSpentError` (code `BUDGET_SPENT`)
   * without calling when it does not. `prompt` sizes the token estimate where the
   * model reports no usage.
   */
  spend<T>(store: HistoryStore, session: SessionKey, work: { name: string; prompt: string }, call: () => Promise<T>): Promise<T>;
  /** What `scope` (a filter on the budget's fields) has spent in the current period. */
  spent(store: HistoryStore, scope: SessionKeyFilter): Promise<BudgetSpend>;
}

/** Memory work was not done because its budget for the period is spent; it is done once the next period begins. */
export class BudgetSpentError extends MemoriaError {
  /** The kind of work refused (`facts`, `summary`, …). */
  readonly work: string;
  /** Which limit was reached. */
  readonly limit: "calls" | "tokens";
  /** When the budget starts again (epoch ms). */
  readonly resetsAt: number;

  constructor(work: string, limit: "calls" | "tokens", spend: BudgetSpend, allowed: number) {
    super(
      "BUDGET_SPENT",
      `The memory budget is spent: ${limit === "calls" ? `${spend.calls} of ${allowed} model calls` : `${spend.tokens} of ${allowed} tokens`} this period; the "${work}" work waits until ${new Date(spend.until).toISOString()}. Raise the budget's ${limit} to allow more.`,
    );
    this.work = work;
    this.limit = limit;
    this.resetsAt = spend.until;
  }

  static override isInstance(error: unknown): error is BudgetSpentError {
    return MemoriaError.hasCode(error, "BUDGET_SPENT");
  }
}

const DAY_MS = 86_400_000;
/** The budget record's lock: held only to count, never across a model call. */
const COUNTING_LOCK = { ttlMs: 10_000, waitMs: 60_000 };

/**
 * A budget per scope and period for the model calls of memory work (fact extraction,
 * the profile, summaries, titles). Spending is stored with the scope, in a record of
 * its own (erased with the user), and counted under that record's turn lock, so
 * processes sharing a store share the budget exactly. When it is spent the work is
 * refused with `BudgetSpentError`: background work waits for the next period (nothing
 * is lost: its progress marks stay where they were), and a turn goes on with what
 * needs no model call.
 */
export function memoryBudget(options: MemoryBudgetOptions): MemoryBudget {
  const scope = checkScopeFields(options.scope, "memoryBudget") as readonly string[];
  const limits = { calls: limitOf(options.calls, "calls"), tokens: limitOf(options.tokens, "tokens") };
  const periodMs = options.periodMs ?? DAY_MS;
  if (!Number.isSafeInteger(periodMs) || periodMs < 1)
    throw new MemoriaError("INVALID_ARGUMENT", `memoryBudget: periodMs must be a whole number of milliseconds >= 1, got ${String(options.periodMs)}.`);
  const now = options.now ?? Date.now;
  const report = (event: BudgetEvent) => {
    try {
      options.onSpend?.(event);
    } catch {
      // a failing metrics hook must not fail memory work
    }
  };

  const current = (stored: JsonValue | undefined): BudgetSpend => {
    const since = Math.floor(now() / periodMs) * periodMs;
    const found = stored as unknown as BudgetSpend | undefined;
    if (found && typeof found === "object" && found.since === since) return found;
    return { since, until: since + periodMs, calls: 0, tokens: 0, refused: 0, byWork: {} };
  };

  /** Reads, changes and writes the scope's spending under its record's lock. */
  async function counting<T>(store: HistoryStore, key: SessionKey, change: (spend: BudgetSpend) => T): Promise<T> {
    const lock = await store.lock(key, COUNTING_LOCK);
    try {
      const spend = current(await store.getState(key, BUDGET_STATE));
      const result = change(spend);
      await store.setState(key, BUDGET_STATE, spend as unknown as JsonValue, { lock });
      return result;
    } finally {
      await lock.release();
    }
  }

  return {
    scope,
    async spend<T>(store: HistoryStore, session: SessionKey, work: { name: string; prompt: string }, call: () => Promise<T>): Promise<T> {
      const key = budgetKeyOf(scopeFilterOf(session, scope));
      const refusal = await counting(store, key, (spend) => {
        const reached =
          limits.calls !== undefined && spend.calls >= limits.calls
            ? "calls"
            : limits.tokens !== undefined && spend.tokens >= limits.tokens
              ? "tokens"
              : undefined;
        if (reached) {
          spend.refused++;
          return new BudgetSpentError(work.name, reached, spend, limits[reached] as number);
        }
        spend.calls++;
        tallyOf(spend, work.name).calls++;
        return undefined;
      });
      if (refusal) {
        report({ work: work.name, outcome: "refused", tokens: 0 });
        throw refusal;
      }
      // A failed call is still a call: its prompt was sent (and may be billed).
      const outcome = await call().then(
        (answer) => ({ answer, failed: false as const }),
        (error: unknown) => ({ error, failed: true as const }),
      );
      const tokens = tokensOf(outcome.failed ? undefined : outcome.answer, work.prompt);
      await counting(store, key, (spend) => {
        spend.tokens += tokens;
        tallyOf(spend, work.name).tokens += tokens;
      });
      report({ work: work.name, outcome: "allowed", tokens });
      if (outcome.failed) throw outcome.error;
      return outcome.answer;
    },
    async spent(store, filter) {
      return current(await store.getState(budgetKeyOf(filter), BUDGET_STATE));
    },
  };
}

/** The key field that marks a budget's record beside a scope's long-term memory record. */
const BUDGET_FIELD = "memoriaBudget";

/**
 * Where a scope's budget is kept: the scope's record key with one more field, so it
 * has a lock of its own (background work holds the memory's record lock across model
 * calls) while export, migration and erasure find it with the scope's records.
 */
export function budgetKeyOf(filter: SessionKeyFilter): SessionKey {
  return createSessionKey({ ...scopeKeyOf(filter), [BUDGET_FIELD]: "spend" });
}

/**
 * The spending kept on a budget's record `key`, while its period lasts; undefined when
 * there is none or its period is over (what `memoria stats` and the studio show, not
 * knowing the budget's own period).
 */
export async function liveSpend(store: HistoryStore, key: SessionKey): Promise<BudgetSpend | undefined> {
  const spend = (await store.getState(key, BUDGET_STATE)) as unknown as BudgetSpend | undefined;
  return spend && typeof spend === "object" && spend.until > Date.now() ? spend : undefined;
}

/** True for the key of a budget's record (what `memoria stats` sums apart from long-term memory). */
export function isBudgetKey(key: SessionKey): boolean {
  return Object.hasOwn(key, BUDGET_FIELD);
}

/** The calls and tokens of one kind of work in a period's spending, made when it is first counted. */
function tallyOf(spend: BudgetSpend, work: string): { calls: number; tokens: number } {
  let tally = spend.byWork[work];
  if (!tally) {
    tally = { calls: 0, tokens: 0 };
    spend.byWork[work] = tally;
  }
  return tally;
}

function limitOf(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new MemoriaError("INVALID_ARGUMENT", `memoryBudget: ${name} must be a whole number >= 0, got ${String(value)}.`);
  return value;
}

/** The tokens a model call used: its reported usage, else about 4 characters a token of the prompt and the answer. */
function tokensOf(answer: unknown, prompt: string): number {
  const usage = (answer as { usage_metadata?: { total_tokens?: unknown } } | undefined)?.usage_metadata?.total_tokens;
  if (typeof usage === "number" && Number.isFinite(usage) && usage >= 0) return usage;
  const text = answer === undefined ? "" : typeof answer === "string" ? answer : JSON.stringify((answer as { content?: unknown }).content ?? answer);
  return Math.ceil((prompt.length + (text?.length ?? 0)) / 4);
}

/** Runs `call` under `budget` when there is one (with `store` and `session` known), else as it is. */
export function budgeted<T>(
  budget: MemoryBudget | undefined,
  store: HistoryStore | undefined,
  session: SessionKey,
  work: { name: string; prompt: string },
  call: () => Promise<T>,
): Promise<T> {
  if (!budget || !store) return call();
  return budget.spend(store, session, work, call);
}

/**
 * What a turn's own model call gives under `budget`, or undefined when the budget is
 * spent (handed to `spent`, which reports it), so the caller goes on with what needs
 * no model call. Any other failure rejects as it is.
 */
export async function unlessSpent<T>(
  budget: MemoryBudget | undefined,
  store: HistoryStore | undefined,
  session: SessionKey,
  work: { name: string; prompt: string },
  call: () => Promise<T>,
  spent: (error: BudgetSpentError) => void,
): Promise<T | undefined> {
  try {
    return await budgeted(budget, store, session, work, call);
  } catch (error) {
    if (!BudgetSpentError.isInstance(error)) throw error;
    spent(error);
    return undefined;
  }
}
