import type { BaseMessage } from "@langchain/core/messages";
import { type HistoryStore, MemoriaError, type MemoryLoadContext, type MemoryStrategy, type SessionKeyFilter } from "@memoria/core";
import { checkScopeFields } from "@memoria/core/store-kit";
import { ask, linesOf, textOfMessages } from "../extraction.js";
import { type MemoryPlacement, checkPlacement, memoryMessage } from "../memory-block.js";
import { type ExtractionModel, FACT_EXTRACTION_PROMPT, canStructure, extractFacts, extractionPrompt } from "./fact-extraction.js";
import { FACTS_STATE, type FactSource, type StatedFact, forgetFact, rememberFact } from "./fact-edits.js";
import { type Fact, type FactsData, applyExtracted, holds, renderFacts, retain, shownToModel } from "./facts.js";
import { modelName } from "../model-name.js";
import { type BackgroundErrorHandler, WorkRegistry, reportOnce } from "./scope-work.js";
import { scopeOfSession } from "./session-scope.js";
import { type MemoryBudget, budgeted, unlessSpent } from "../memory-budget.js";

export const SUBJECT_RESOLUTION_PROMPT = `Which of the known subjects does the user's new message refer to, by name or through words like "she", "he", "it", "there" or "my sister"? Use the recent conversation to tell who is meant.

Known subjects: {subjects}

Recent conversation:
{recent}

New message: {input}

Answer with the subjects' names exactly as listed, separated by commas, or NONE.`;

export interface FactMemoryOptions {
  /** Extracts facts after each turn (off the turn), and picks the ones a message refers to when there are many. */
  model: ExtractionModel;
  /**
   * The session fields the facts belong to: `["userId"]` keeps one set of facts per
   * user across all their conversations.
   * @default the whole session key (facts of one conversation)
   */
  scope?: readonly string[];
  /**
   * Ask for the answer through `withStructuredOutput` (tool calling); `false` asks
   * for JSON in the text.
   * @default true when the model can call tools
   */
  structured?: boolean;
  /** Up to this many facts go into every prompt; past it, the model picks those the message refers to. @default 30 */
  maxFacts?: number;
  /** Replaced facts shown (dated) beside what holds, for "where did she live before?". @default 5 */
  pastFacts?: number;
  /** Facts learned longer ago than this are dropped. @default kept */
  retentionMs?: number;
  /** Where background failures go; the failed turn is retried with the next one. @default console.error */
  onError?: BackgroundErrorHandler;
  /** @default "facts" */
  stateName?: string;
  /** The extraction prompt, with `{facts}` and `{messages}`. */
  prompt?: string;
  /** @default 20 */
  batchSize?: number;
  /** Where the memory block goes: a system message, or a user message of its own. @default "system" */
  placement?: MemoryPlacement;
  /**
   * Counts the model calls (extraction, and picking facts past `maxFacts`) against a
   * budget per scope (`memoryBudget`). Spent, extraction waits for the next period
   * (reported once), and a turn gets the newest `maxFacts` facts without a model call.
   * @default no budget
   */
  budget?: MemoryBudget;
}

export interface FactMemory extends MemoryStrategy {
  /** Resolves when all background extraction has finished (tests, shutdown). */
  idle(): Promise<void>;
  /** The facts a turn's input refers to (all that hold, up to `maxFacts`; past that, those the model picks), and the ones they replaced. */
  relevant(context: MemoryLoadContext): Promise<{ current: Fact[]; past: Fact[] }>;
  /** The scope's facts, oldest first, with their time ranges; `current: true` keeps only those that hold. */
  facts(store: HistoryStore, scope: SessionKeyFilter, options?: { current?: boolean }): Promise<Fact[]>;
  /** Records a fact the user stated (a memory tool, the app), closing the facts it replaces. */
  remember(store: HistoryStore, scope: SessionKeyFilter, fact: StatedFact, source: FactSource): Promise<Fact>;
  /** Withdraws a fact (closed, kept for audit, never shown again) or erases it; undefined when the scope has no such fact. */
  forget(store: HistoryStore, scope: SessionKeyFilter, id: string, how?: "withdraw" | "erase"): Promise<Fact | undefined>;
  /** Processes what a crash left unprocessed in the scope now (it is also done on the scope's next turn). */
  resume(store: HistoryStore, scope: SessionKeyFilter): Promise<void>;
}

/**
 * Facts with time, kept per scope across conversations (Zep's and Mem0's idea, on
 * memoria's stores): after each saved turn a model extracts facts; one that
 * contradicts a known fact closes it (`until`) instead of sitting beside it. The
 * prompt gets what holds now, and the last facts it replaced, dated.
 */
export function factMemory(options: FactMemoryOptions): FactMemory {
  const fields = checkScopeFields(options.scope, "factMemory");
  const placement = checkPlacement(options.placement, "factMemory");
  const maxFacts = options.maxFacts ?? 30;
  const pastFacts = options.pastFacts ?? 5;
  if (!Number.isInteger(maxFacts) || maxFacts < 1)
    throw new MemoriaError("INVALID_ARGUMENT", `factMemory: maxFacts must be a whole number >= 1, got ${maxFacts}.`);
  const structured = options.structured ?? canStructure(options.model);
  const template = options.prompt ?? FACT_EXTRACTION_PROMPT;
  const stateName = options.stateName ?? FACTS_STATE;
  const registry = new WorkRegistry<FactsData>(
    {
      name: stateName,
      model: modelName(options.model),
      batchSize: options.batchSize ?? 20,
      async process(batch) {
        const known = (batch.data?.facts ?? []).filter(holds);
        const prompt = extractionPrompt(template, known, batch.messages);
        const extracted = await budgeted(options.budget, batch.store, batch.session, { name: "facts", prompt }, () =>
          extractFacts(options.model, prompt, structured),
        );
        const data = applyExtracted(batch.data, extracted, { session: batch.sessionId, first: batch.first, count: batch.messages.length, now: batch.now });
        return retain(data, options.retentionMs === undefined ? undefined : batch.now - options.retentionMs);
      },
    },
    fields,
    options.onError ?? reportOnce,
  );

  async function pick(context: MemoryLoadContext, current: Fact[]): Promise<Fact[]> {
    if (current.length <= maxFacts) return current;
    const subjects = [...new Set(current.map((fact) => fact.subject))];
    const recent = linesOf(await context.read({ last: 4 }));
    const prompt = SUBJECT_RESOLUTION_PROMPT.replace("{subjects}", subjects.join(", "))
      .replace("{recent}", recent || "(none)")
      .replace("{input}", textOfMessages(context.input));
    const spent = (error: unknown) =>
      (options.onError ?? reportOnce)(error, {
        scope: scopeOfSession(context.sessionKey, fields).filter,
        session: context.sessionKey,
        memory: stateName,
        model: modelName(options.model),
      });
    const asked = await unlessSpent(options.budget, context.store, context.sessionKey, { name: "facts", prompt }, () => ask(options.model, prompt), spent);
    if (asked === undefined) return current.slice(-maxFacts); // spent: the newest facts, no model call
    const answer = asked.toLowerCase();
    const named = new Set(answer === "none" ? [] : answer.split(",").map((name) => name.trim()));
    return current.filter((fact) => named.has(fact.subject.toLowerCase())).slice(-maxFacts);
  }

  async function relevant(context: MemoryLoadContext): Promise<{ current: Fact[]; past: Fact[] }> {
    const work = registry.for(context.store, "factMemory");
    const facts = (await work.dataOf(context.sessionKey))?.facts ?? [];
    const current = await pick(context, facts.filter(holds));
    const subjects = new Set(current.map((fact) => fact.subject));
    return { current, past: facts.filter((fact) => !holds(fact) && shownToModel(fact) && subjects.has(fact.subject)).slice(-pastFacts) };
  }

  return {
    name: `facts(scope=${fields ? fields.join("+") : "session"})`,
    async load(context): Promise<BaseMessage[]> {
      const { current, past } = await relevant(context);
      return current.length ? [memoryMessage(renderFacts(current, past), placement)] : [];
    },
    relevant,
    afterSaveUnlocked: true, // it only hands the turn to the background
    async afterSave(context) {
      registry.for(context.store, "factMemory").notify(context.sessionKey);
    },
    idle: () => registry.idle(),
    async facts(store, scope, query) {
      const facts = (await registry.for(store, "factMemory").data(scope))?.facts ?? [];
      return query?.current ? facts.filter(holds) : facts;
    },
    remember: (store, scope, fact, source) => rememberFact(store, scope, fact, source, stateName),
    forget: (store, scope, id, how) => forgetFact(store, scope, id, how, stateName),
    resume: (store, scope) => registry.for(store, "factMemory").resume(scope),
  };
}
