import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import { memoryBlock, memoryMessage } from "./memory-block.js";
import { quoteText } from "./quoting.js";
import type { MemoryLoadContext, MemoryStrategy } from "@memoria/core";
import { type SummaryModel, extendSummary } from "./summarizer.js";
import { type MemoryBudget, unlessSpent } from "./memory-budget.js";
import { reportOnce } from "./long-term/scope-work.js";
import { modelName } from "./model-name.js";
import { type SummaryState, compact, readSummary, writeSummary } from "./summary-state.js";

export interface SummaryMemoryOptions {
  /** Writes the summary. */
  model: SummaryModel;
  /** The summarization prompt, with `{summary}` and `{new_lines}`. @default DEFAULT_SUMMARY_PROMPT */
  prompt?: string;
  /** @default "summary" */
  stateName?: string;
  /**
   * Text put before the summary, in place of the memory block it is shown in by
   * default (`<memory kind="summary">…</memory>`, its lines quoted): the summary is
   * then shown as it is, undelimited.
   * @default the memory block
   */
  preamble?: string;
  /**
   * Remove folded messages from the store (it must support `trim`), for users who
   * must bound storage: the session then holds only what is not yet summarized.
   * @default false
   */
  compact?: boolean;
  /**
   * Counts the summary's model calls against a budget per scope (`memoryBudget`).
   * Spent, the summary stays as it was (said once per period) and takes in the
   * messages it missed once the next period begins.
   * @default no budget
   */
  budget?: MemoryBudget;
}

/** At most this many unfolded messages are summarized at once (first use on a long session). */
export const MAX_FOLD = 400;

/**
 * Folds every message not yet in the summary into it, reading only those; on a
 * session far longer than ever summarized, only its last MAX_FOLD messages.
 */
export async function foldAll(
  context: MemoryLoadContext,
  model: SummaryModel,
  name: string,
  prompt?: string,
  compacting = false,
  budget?: MemoryBudget,
): Promise<SummaryState> {
  const current = await readSummary(context.state, name);
  const end = current.trimmed + (await context.count()); // positions count from the session's start
  if (end <= current.folded) return current;
  const fresh = await context.read({ last: Math.min(end - current.folded, MAX_FOLD) });
  const summary = await summarizeWithin(budget, context, model, (asked) => extendSummary(asked, current.summary, fresh, { prompt }));
  if (summary === undefined) return current; // the budget is spent: the summary as it was
  const next = { summary, folded: end, trimmed: current.trimmed };
  await writeSummary(context.state, name, next);
  if (compacting) await compact(context, name, next);
  return next;
}

/**
 * Runs a summary's model call under `budget`, if any: undefined when the budget is
 * spent (reported once per period), so the strategy keeps the summary it has.
 */
export async function summarizeWithin(
  budget: MemoryBudget | undefined,
  context: MemoryLoadContext,
  model: SummaryModel,
  summarize: (model: SummaryModel) => Promise<string>,
): Promise<string | undefined> {
  if (!budget) return summarize(model);
  // The prompt is only known inside the summarizer: the model it is given counts what it is sent.
  let sent = "";
  const counted: SummaryModel = {
    invoke(input, config) {
      sent = input;
      return model.invoke(input, config);
    },
  };
  const work = {
    name: "summary",
    get prompt() {
      return sent;
    },
  };
  const spent = (error: unknown) => reportOnce(error, { scope: context.sessionKey, session: context.sessionKey, memory: "summary", model: modelName(model) });
  return unlessSpent(budget, context.store, context.sessionKey, work, () => summarize(counted), spent);
}

export function summaryMessage(summary: string, preamble?: string): BaseMessage[] {
  if (!summary) return [];
  if (preamble !== undefined) return [new SystemMessage(`${preamble}${summary}`)];
  return [memoryMessage(memoryBlock("summary", "Summary of the conversation so far", quoteText(summary)))];
}

/**
 * The conversation as a running summary (LangChain's ConversationSummaryMemory):
 * each turn's messages are folded in after it is saved, so the prompt holds one
 * summary message whatever the session's length.
 */
export function summaryMemory(options: SummaryMemoryOptions): MemoryStrategy {
  const name = options.stateName ?? "summary";
  return {
    name: "summary",
    async load(context) {
      const { summary } = await foldAll(context, options.model, name, options.prompt, options.compact, options.budget); // repairs a fold a crash skipped
      return summaryMessage(summary, options.preamble);
    },
    async afterSave(context) {
      await foldAll(context, options.model, name, options.prompt, options.compact, options.budget);
    },
  };
}
