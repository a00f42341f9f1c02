import { Document } from "@langchain/core/documents";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { BaseMemory, type InputValues, type MemoryVariables, type OutputValues, getInputValue } from "@langchain/core/memory";
import type { VectorStoreRetrieverInterface } from "@langchain/core/vectorstores";
import type { MemoryStrategy } from "@memoria/core";
import { entityMemory, loadEntities } from "../entity-memory.js";
import { knowledgeGraphMemory, loadTriples } from "../knowledge-graph-memory.js";
import type { SummaryModel } from "../summarizer.js";
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
    this.strategy = entityMemory(this.options);
  }
  override get memoryKeys(): string[] {
    return [this.chatHistoryKey, this.entitiesKey];
  }
  override async loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    const context = this.context(humanInput(values, this.inputKey, this.memoryKeys));
    const { entities, recent } = await loadEntities(context, this.options);
    return { [this.chatHistoryKey]: this.format(recent), [this.entitiesKey]: entities };
  }
}

export interface ConversationKGMemoryInput extends ChatMemoryInput {
  llm: SummaryModel;
  /** @default 2 */
  k?: number;
}

/** LangChain's ConversationKGMemory: the known triples about what the input names. */
export class ConversationKGMemory extends StrategyMemory {
  protected readonly strategy: MemoryStrategy;
  private readonly options: { model: SummaryModel; k: number };
  constructor(fields: ConversationKGMemoryInput) {
    super(fields);
    this.options = { model: fields.llm, k: fields.k ?? 2 };
    this.strategy = knowledgeGraphMemory(this.options);
  }
  override async loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    const { triples } = await loadTriples(this.context(humanInput(values, this.inputKey, this.memoryKeys)), this.options);
    const text = triples.map((t) => `${t.join(" ")}.`).join("\n");
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

