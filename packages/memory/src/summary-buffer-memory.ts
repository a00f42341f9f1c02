import { MemoriaError, type MemoryLoadContext, type MemoryStrategy } from "@memoria/core";
import type { BaseMessage } from "@langchain/core/messages";
import { type SummaryModel, extendSummary } from "./summarizer.js";
import { MAX_FOLD, summarizeWithin, summaryMessage } from "./summary-memory.js";
import type { MemoryBudget } from "./memory-budget.js";
import { compact, readSummary, writeSummary } from "./summary-state.js";
import { type TokenCounter, tiktokenCounter, truncateToTokens } from "./token-counter.js";
import { cutToFit } from "./turn-window.js";

export interface SummaryBufferMemoryOptions {
  model: SummaryModel;
  /** The most tokens of recent messages kept word for word; older turns are folded into the summary. */
  maxTokens: number;
  /**
   * The summary's own budget. The prompt asks for a summary, but models overshoot;
   * a longer one is cut to this many tokens, so the history in the prompt never
   * exceeds `maxTokens + maxSummaryTokens` (plus the preamble).
   * @default 256
   */
  maxSummaryTokens?: number;
  /** @default js-tiktoken cl100k_base */
  tokenCounter?: TokenCounter;
  prompt?: string;
  /** @default "summary-buffer" */
  stateName?: string;
  /** Remove folded messages from the store (it must support `trim`). @default false */
  compact?: boolean;
  preamble?: string;
  /**
   * Counts the summary's model calls against a budget per scope (`memoryBudget`).
   * Spent, the prompt holds the summary as it was and the newest turns that fit
   * `maxTokens`; what lies between is folded in once the next period begins.
   * @default no budget
   */
  budget?: MemoryBudget;
}

/**
 * Recent turns word for word, older ones as a running summary (LangChain's
 * ConversationSummaryBufferMemory), done right: what is loaded is bounded by
 * `maxTokens` plus the summary's budget, and only newly folded messages go to the
 * model, never the whole history.
 */
export function summaryBufferMemory(options: SummaryBufferMemoryOptions): MemoryStrategy {
  const { maxTokens, model } = options;
  if (!Number.isFinite(maxTokens) || maxTokens <= 0)
    throw new MemoriaError("INVALID_ARGUMENT", `summaryBufferMemory: maxTokens must be > 0, got ${maxTokens}.`);
  const maxSummaryTokens = options.maxSummaryTokens ?? 256;
  const count = options.tokenCounter ?? tiktokenCounter();
  const name = options.stateName ?? "summary-buffer";

  /** Folds the oldest unfolded turns until the rest fit in maxTokens; returns the summary and the buffer. */
  async function settle(context: MemoryLoadContext): Promise<{ summary: string; buffer: BaseMessage[] }> {
    const state = await readSummary(context.state, name);
    const total = state.trimmed + (await context.count()); // positions count from the session's start
    const unfoldedCount = total - state.folded;
    // First use on a long session: anything older than MAX_FOLD unfolded messages is let go.
    const unfolded = unfoldedCount > 0 ? await context.read({ last: Math.min(unfoldedCount, MAX_FOLD) }) : [];
    const cut = await cutToFit(unfolded, maxTokens, count);
    if (cut === 0 && unfolded.length === unfoldedCount) return { summary: state.summary, buffer: unfolded };
    const extended = await summarizeWithin(options.budget, context, model, (asked) =>
      extendSummary(asked, state.summary, unfolded.slice(0, cut), { prompt: options.prompt }),
    );
    if (extended === undefined) return { summary: state.summary, buffer: unfolded.slice(cut) }; // the budget is spent
    const summary = truncateToTokens(extended, maxSummaryTokens);
    const next = { summary, folded: total - (unfolded.length - cut), trimmed: state.trimmed };
    await writeSummary(context.state, name, next);
    if (options.compact) await compact(context, name, next);
    return { summary, buffer: unfolded.slice(cut) };
  }

  return {
    name: `summary-buffer(max=${maxTokens})`,
    async load(context) {
      const { summary, buffer } = await settle(context);
      return [...summaryMessage(summary, options.preamble), ...buffer];
    },
    async afterSave(context) {
      await settle(context);
    },
  };
}
