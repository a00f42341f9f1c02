import type { BaseMessage } from "@langchain/core/messages";
import type { HistoryStore, JsonValue, MemoryStrategy, SessionKeyFilter } from "@memoria/core";
import { checkScopeFields, toJsonValue } from "@memoria/core/store-kit";
import { linesOf } from "../extraction.js";
import { type MemoryPlacement, checkPlacement, memoryBlock, memoryMessage } from "../memory-block.js";
import { quoteText } from "../quoting.js";
import { textOf } from "../summarizer.js";
import { type ExtractionModel, askForJson, canStructure } from "./fact-extraction.js";
import { PROFILE_STATE, type ProfileData } from "./profile-edits.js";
import { modelName } from "../model-name.js";
import { type MemoryBudget, budgeted } from "../memory-budget.js";
import { type BackgroundErrorHandler, WorkRegistry, reportOnce } from "./scope-work.js";

export const WORKING_MEMORY_PROMPT = `You keep a short profile of the user that every future conversation starts from: name, where they live, work, preferences, goals, ongoing plans. Update it with what the new lines of conversation say. Keep what is still true, replace what changed, drop nothing else.

Current profile:
{profile}

New lines of conversation:
{lines}

{format}`;

const TEXT_FORMAT = "Answer with the whole updated profile as short lines of text, or the current profile unchanged.";
const JSON_FORMAT = "Answer with the whole updated profile as one JSON object that follows this JSON schema:\n{schema}";

export interface WorkingMemoryOptions {
  /** Rewrites the profile after each turn (off the turn). */
  model: ExtractionModel;
  /** @default the whole session key */
  scope?: readonly string[];
  /**
   * A JSON schema the profile follows (a JSON object is kept), or none for free
   * text. With a schema and a model that calls tools, `withStructuredOutput` is used.
   */
  schema?: Record<string, unknown>;
  /** A profile not updated for this long is dropped. @default kept */
  retentionMs?: number;
  /** @default console.error */
  onError?: BackgroundErrorHandler;
  /** @default "profile" */
  stateName?: string;
  /** With `{profile}`, `{lines}` and `{format}`. */
  prompt?: string;
  /** @default 20 */
  batchSize?: number;
  /** Where the memory block goes: a system message, or a user message of its own. @default "system" */
  placement?: MemoryPlacement;
  /** Counts the profile's model calls against a budget per scope (`memoryBudget`); spent, the update waits for the next period (reported once). @default no budget */
  budget?: MemoryBudget;
}

export interface WorkingMemory extends MemoryStrategy {
  idle(): Promise<void>;
  /** The scope's profile (text, or the schema's object), or undefined before the first turn was processed. */
  profile(store: HistoryStore, scope: SessionKeyFilter): Promise<JsonValue | undefined>;
  resume(store: HistoryStore, scope: SessionKeyFilter): Promise<void>;
}

function shown(profile: JsonValue): string {
  return typeof profile === "string" ? profile : JSON.stringify(profile, null, 2);
}

/**
 * Mastra's working memory on memoria's stores: a per-scope profile document the
 * model keeps up to date after each turn, injected at the top of every prompt.
 */
export function workingMemory(options: WorkingMemoryOptions): WorkingMemory {
  const fields = checkScopeFields(options.scope, "workingMemory");
  const placement = checkPlacement(options.placement, "workingMemory");
  const schema = options.schema;
  const structured = schema !== undefined && canStructure(options.model);
  const format = schema ? JSON_FORMAT.replace("{schema}", JSON.stringify(schema)) : TEXT_FORMAT;
  const template = options.prompt ?? WORKING_MEMORY_PROMPT;
  const fresh = (data: ProfileData | undefined, now: number) =>
    data && (options.retentionMs === undefined || now - data.updatedAt <= options.retentionMs) ? data : undefined;

  const registry = new WorkRegistry<ProfileData>(
    {
      name: options.stateName ?? PROFILE_STATE,
      model: modelName(options.model),
      batchSize: options.batchSize ?? 20,
      async process(batch) {
        const current = fresh(batch.data, batch.now);
        const prompt = template
          .replace("{profile}", current ? shown(current.profile) : "(empty)")
          .replace("{lines}", linesOf(batch.messages))
          .replace("{format}", format);
        const profile = await budgeted(options.budget, batch.store, batch.session, { name: "profile", prompt }, async () =>
          schema
            ? toJsonValue(await askForJson(options.model, prompt, schema, "update_profile", structured))
            : textOf(await options.model.invoke(prompt)).trim(),
        );
        return { profile, updatedAt: batch.now };
      },
    },
    fields,
    options.onError ?? reportOnce,
  );

  return {
    name: `working-memory(scope=${fields ? fields.join("+") : "session"})`,
    async load(context): Promise<BaseMessage[]> {
      const work = registry.for(context.store, "workingMemory");
      const data = fresh(await work.dataOf(context.sessionKey), Date.now());
      if (!data || data.profile === "" || data.profile === null) return [];
      return [memoryMessage(memoryBlock("profile", "What you know about the user (working memory)", quoteText(shown(data.profile))), placement)];
    },
    afterSaveUnlocked: true, // it only hands the turn to the background
    async afterSave(context) {
      registry.for(context.store, "workingMemory").notify(context.sessionKey);
    },
    idle: () => registry.idle(),
    async profile(store, scope) {
      return fresh(await registry.for(store, "workingMemory").data(scope), Date.now())?.profile;
    },
    resume: (store, scope) => registry.for(store, "workingMemory").resume(scope),
  };
}
