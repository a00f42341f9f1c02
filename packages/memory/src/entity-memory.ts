import type { BaseMessage } from "@langchain/core/messages";
import type { MemoryLoadContext, MemoryStrategy } from "@memoria/core";
import { ask, contextMessage, linesOf, mentions, textOfMessages, unprocessed } from "./extraction.js";
import { quoteItem } from "./quoting.js";
import type { SummaryModel } from "./summarizer.js";
import { readLastTurns } from "./turn-window.js";

export const ENTITY_EXTRACTION_PROMPT = `You read a conversation and list the names of the people, places, organizations and things it mentions that are worth remembering.

Conversation:
{lines}

Answer with the names separated by commas, or NONE.`;

export const ENTITY_SUMMARY_PROMPT = `You keep a short summary of what is known about "{entity}". Update it with what the new lines of conversation say about it; keep every fact that is still true.

Existing summary:
{summary}

New lines of conversation:
{lines}

Updated summary:`;

export interface EntityMemoryOptions {
  /** Extracts entities and writes what is known about each. */
  model: SummaryModel;
  /** Recent turns kept word for word beside the entities. @default 3 */
  k?: number;
  /** @default "entities" */
  stateName?: string;
  extractionPrompt?: string;
  summaryPrompt?: string;
}

interface EntityState {
  entities: Record<string, string>;
  processed: number;
}

/** Brings entity summaries up to date, then gives those the input names, and the last `k` turns. */
export async function loadEntities(
  context: MemoryLoadContext,
  options: EntityMemoryOptions,
): Promise<{ entities: Record<string, string>; recent: BaseMessage[] }> {
  const state = await catchUp(context, options);
  const input = textOfMessages(context.input);
  const entities = Object.fromEntries(Object.entries(state.entities).filter(([entity]) => mentions(input, entity)));
  return { entities, recent: await readLastTurns((o) => context.read(o), options.k ?? 3) };
}

async function catchUp(context: MemoryLoadContext, options: EntityMemoryOptions): Promise<EntityState> {
  const name = options.stateName ?? "entities";
  const saved = (await context.state.get(name)) as Partial<EntityState> | undefined;
  const state: EntityState = { entities: { ...(saved?.entities ?? {}) }, processed: saved?.processed ?? 0 };
  const { messages, total } = await unprocessed(context, state.processed, 200);
  if (messages.length === 0) return state;
  const lines = linesOf(messages);
  const answer = await ask(options.model, (options.extractionPrompt ?? ENTITY_EXTRACTION_PROMPT).replace("{lines}", lines));
  const names =
    answer.toUpperCase() === "NONE"
      ? []
      : answer
          .split(",")
          .map((n) => n.trim())
          .filter(Boolean);
  for (const entity of [...new Set(names)]) {
    const prompt = (options.summaryPrompt ?? ENTITY_SUMMARY_PROMPT)
      .replace("{entity}", entity)
      .replace("{summary}", state.entities[entity] ?? "")
      .replace("{lines}", lines);
    state.entities[entity] = await ask(options.model, prompt);
  }
  state.processed = total;
  await context.state.set(name, { entities: state.entities, processed: state.processed });
  return state;
}

/**
 * What is known about the people and things the conversation mentions (LangChain's
 * EntityMemory). After each turn the model names the entities of the new lines and
 * updates a summary of each; before a turn, the summaries of the entities the input
 * names are put in the prompt, with the last `k` turns. Loading calls no model.
 */
export function entityMemory(options: EntityMemoryOptions): MemoryStrategy {
  return {
    name: `entity(k=${options.k ?? 3})`,
    async load(context) {
      const { entities, recent } = await loadEntities(context, options);
      const lines = Object.entries(entities).map(([entity, summary]) => quoteItem(`${entity}: ${summary}`));
      return [...contextMessage("entities", "What is known about what this message mentions", lines), ...recent];
    },
    async afterSave(context) {
      await catchUp(context, options);
    },
  };
}
