import type { BaseMessage } from "@langchain/core/messages";
import type { MemoryLoadContext, MemoryStrategy } from "@memoria/core";
import { ask, contextMessage, linesOf, mentions, textOfMessages, unprocessed } from "./extraction.js";
import { quoteItem } from "./quoting.js";
import type { SummaryModel } from "./summarizer.js";
import { readLastTurns } from "./turn-window.js";

export const TRIPLE_EXTRACTION_PROMPT = `Extract the facts the human states in these lines of conversation as knowledge triples, one per line, written as: subject | relation | object

Lines:
{lines}

Triples (or NONE):`;

export type Triple = [subject: string, relation: string, object: string];

export interface KnowledgeGraphMemoryOptions {
  model: SummaryModel;
  /** Recent turns kept word for word. @default 2 */
  k?: number;
  /** @default "knowledge-graph" */
  stateName?: string;
  prompt?: string;
}

interface GraphState {
  triples: Triple[];
  processed: number;
}

/** Brings the triples up to date, then gives those whose subject or object the input names, and the last `k` turns. */
export async function loadTriples(context: MemoryLoadContext, options: KnowledgeGraphMemoryOptions): Promise<{ triples: Triple[]; recent: BaseMessage[] }> {
  const { triples } = await catchUp(context, options);
  const input = textOfMessages(context.input);
  const relevant = triples.filter(([subject, , object]) => mentions(input, subject) || mentions(input, object));
  return { triples: relevant, recent: await readLastTurns((o) => context.read(o), options.k ?? 2) };
}

async function catchUp(context: MemoryLoadContext, options: KnowledgeGraphMemoryOptions): Promise<GraphState> {
  const name = options.stateName ?? "knowledge-graph";
  const saved = (await context.state.get(name)) as Partial<GraphState> | undefined;
  const state: GraphState = { triples: [...(saved?.triples ?? [])], processed: saved?.processed ?? 0 };
  const { messages, total } = await unprocessed(context, state.processed, 200);
  if (messages.length === 0) return state;
  const answer = await ask(options.model, (options.prompt ?? TRIPLE_EXTRACTION_PROMPT).replace("{lines}", linesOf(messages)));
  const seen = new Set(state.triples.map((t) => t.join("\u0000").toLowerCase()));
  for (const line of answer.split("\n")) {
    const parts = line
      .replace(/^[-*\s]+/, "")
      .split("|")
      .map((p) => p.trim());
    if (parts.length !== 3 || parts.some((p) => !p)) continue;
    const id = parts.join("\u0000").toLowerCase();
    if (!seen.has(id)) {
      seen.add(id);
      state.triples.push(parts as Triple);
    }
  }
  state.processed = total;
  await context.state.set(name, { triples: state.triples, processed: state.processed });
  return state;
}

/**
 * Facts as (subject, relation, object) triples (LangChain's ConversationKGMemory).
 * After each turn the model extracts triples from the new lines; before a turn,
 * the triples whose subject or object the input names go into the prompt.
 */
export function knowledgeGraphMemory(options: KnowledgeGraphMemoryOptions): MemoryStrategy {
  return {
    name: `knowledge-graph(k=${options.k ?? 2})`,
    async load(context) {
      const { triples, recent } = await loadTriples(context, options);
      return [
        ...contextMessage(
          "knowledge",
          "Known facts about what this message mentions",
          triples.map((t) => quoteItem(t.join(" "))),
        ),
        ...recent,
      ];
    },
    async afterSave(context) {
      await catchUp(context, options);
    },
  };
}
