import { Document } from "@langchain/core/documents";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { BaseMemory, type InputValues, type MemoryVariables, type OutputValues, getInputValue } from "@langchain/core/memory";
import type { VectorStoreRetrieverInterface } from "@langchain/core/vectorstores";
import type { MemoryStrategy } from "@memoria/core";
import { entityMemory, loadEntities } from "../entity-memory.js";
import { knowledgeGraphMemory, loadTriples } from "../knowledge-graph-memory.js";
import type { FactMemory } from "../long-term/fact-memory.js";
import type { SummaryModel } from "../summarizer.js";
import { readLastTurns } from "../turn-window.js";
import { type ChatMemoryInput, StrategyMemory } from "./strategy-memory.js";

function humanInput(values: InputValues, inputKey: string | undefined, memoryKeys: string[]): HumanMessage[] {
  const own = Object.fromEntries(Object.entries(values).filter(([key]) => !memoryKeys.includes(key)));
  if (Object.keys(own).length === 0) return [];
  return [new HumanMessage(String(getInputValue(own, inputKey)))];
}

export interface EntityMemoryInput extends ChatMemoryInput {
  llm: SummaryModel;
  /** Recent turns in the history variable. @default 3 */
  k?: number;
  /** @default "history" */
  chatHistoryKey?: string;
  /** @default "entities" */
  entitiesKey?: string;
  /**
   * Facts with time, across conversations: `factMemory({ model, scope: ["userId"] })`
   * over a memoria store's history (`chatHistory: store.history(key)`). Entities then
   * come from its facts that hold (what the input refers to, pronouns included, picked
   * by the model past `maxFacts`), extracted after each save, off the call.
   */
  facts?: FactMemory;
}

/** Facts by subject, each dated: what a classic memory's variable shows. */
function factsBySubject(current: { subject: string; statement: string; since: string }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const fact of current) out[fact.subject] = [out[fact.subject], `${fact.statement} (since ${fact.since.slice(0, 10)}).`].filter(Boolean).join(" ");
  return out;
}

/**
 * LangChain's EntityMemory: `history` holds the last `k` turns, `entities` an
 * object of what is known about each entity the input names.
 */
export class EntityMemory extends StrategyMemory {
  chatHistoryKey: string;
  entitiesKey: string;
  protected readonly strategy: MemoryStrategy;
  private readonly options: { model: SummaryModel; k: number };
  constructor(fields: EntityMemoryInput) {
    super(fields);
    this.chatHistoryKey = fields.chatHistoryKey ?? "history";
    this.entitiesKey = fields.entitiesKey ?? "entities";
    this.options = { model: fields.llm, k: fields.k ?? 3 };
    this.facts = fields.facts;
    this.strategy = this.facts ?? entityMemory(this.options);
  }
  private readonly facts?: FactMemory;
  override get memoryKeys(): string[] {
    return [this.chatHistoryKey, this.entitiesKey];
  }
  override async loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    const context = this.context(humanInput(values, this.inputKey, this.memoryKeys));
    if (this.facts) {
      const recent = await readLastTurns((o) => context.read(o), this.options.k);
      return { [this.chatHistoryKey]: this.format(recent), [this.entitiesKey]: factsBySubject((await this.facts.relevant(context)).current) };
    }
    const { entities, recent } = await loadEntities(context, this.options);
    return { [this.chatHistoryKey]: this.format(recent), [this.entitiesKey]: entities };
  }
}

export interface ConversationKGMemoryInput extends ChatMemoryInput {
  llm: SummaryModel;
  /** @default 2 */
  k?: number;
  /** Facts with time, across conversations, as for `EntityMemory`: the variable then lists the facts the input refers to, dated. */
  facts?: FactMemory;
}

/** LangChain's ConversationKGMemory: the known triples about what the input names. */
export class ConversationKGMemory extends StrategyMemory {
  protected readonly strategy: MemoryStrategy;
  private readonly options: { model: SummaryModel; k: number };
  constructor(fields: ConversationKGMemoryInput) {
    super(fields);
    this.options = { model: fields.llm, k: fields.k ?? 2 };
    this.facts = fields.facts;
    this.strategy = this.facts ?? knowledgeGraphMemory(this.options);
  }
  private readonly facts?: FactMemory;
  override async loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    const context = this.context(humanInput(values, this.inputKey, this.memoryKeys));
    const text = this.facts
      ? (await this.facts.relevant(context)).current.map((fact) => `${fact.statement} (since ${fact.since.slice(0, 10)}).`).join("\n")
      : (await loadTriples(context, this.options)).triples.map((t) => `${t.join(" ")}.`).join("\n");
    return { [this.memoryKey]: this.returnMessages ? (text ? [new SystemMessage(text)] : []) : text };
  }
}

export interface VectorStoreRetrieverMemoryInput {
  vectorStoreRetriever: VectorStoreRetrieverInterface;
  /** @default "memory" */
  memoryKey?: string;
  inputKey?: string;
  /** Documents rather than their joined text. @default false */
  returnDocs?: boolean;
}

/**
 * LangChain's VectorStoreRetrieverMemory: each saved exchange becomes a document
 * in a vector store; the documents most similar to the input are recalled.
 */
export class VectorStoreRetrieverMemory extends BaseMemory {
  vectorStoreRetriever: VectorStoreRetrieverInterface;
  memoryKey: string;
  inputKey?: string;
  returnDocs: boolean;
  constructor(fields: VectorStoreRetrieverMemoryInput) {
    super();
    this.vectorStoreRetriever = fields.vectorStoreRetriever;
    this.memoryKey = fields.memoryKey ?? "memory";
    this.inputKey = fields.inputKey;
    this.returnDocs = fields.returnDocs ?? false;
  }
  get memoryKeys(): string[] {
    return [this.memoryKey];
  }
  async loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    const [query] = humanInput(values, this.inputKey, this.memoryKeys);
    const docs = query ? await this.vectorStoreRetriever.invoke(String(query.content)) : [];
    return { [this.memoryKey]: this.returnDocs ? docs : docs.map((doc) => doc.pageContent).join("\n") };
  }
  async saveContext(inputValues: InputValues, outputValues: OutputValues): Promise<void> {
    const text = Object.entries({ ...inputValues, ...outputValues })
      .filter(([key]) => key !== this.memoryKey)
      .map(([key, value]) => `${key}: ${value}`)
      .join("\n");
    await this.vectorStoreRetriever.addDocuments([new Document({ pageContent: text })]);
  }
}
