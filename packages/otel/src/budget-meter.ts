import { type MeterProvider, metrics } from "@opentelemetry/api";

/** What `memoryBudget`'s `onSpend` reports of one model call of memory work (its own type, so this package needs no `@memoria/memory`). */
export interface SpendEvent {
  work: string;
  outcome: "allowed" | "refused";
  tokens: number;
}

export interface BudgetMeterOptions {
  /** @default the global meter provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
}

/**
 * An `onSpend` for `memoryBudget` that counts memory work as metrics:
 * `memoria.memory.calls` (model calls of memory work, by work and outcome: allowed,
 * or refused because the budget was spent) and `memoria.memory.tokens` (the tokens
 * those calls used, by work). Neither names a user or a scope.
 */
export function budgetMeter(options: BudgetMeterOptions = {}): (event: SpendEvent) => void {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter("@memoria/otel");
  const calls = meter.createCounter("memoria.memory.calls", {
    unit: "{call}",
    description: "Model calls of memory work (extraction, profile, summaries, titles), allowed or refused by a budget",
  });
  const tokens = meter.createCounter("memoria.memory.tokens", { unit: "{token}", description: "Tokens used by memory work's model calls" });
  return (event) => {
    calls.add(1, { "memoria.memory.work": event.work, "memoria.budget.outcome": event.outcome });
    if (event.tokens > 0) tokens.add(event.tokens, { "memoria.memory.work": event.work });
  };
}
