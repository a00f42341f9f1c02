import { BaseMemory, type InputValues, type MemoryVariables, type OutputValues } from "@langchain/core/memory";

/** Another memory, read but never written (LangChain's ReadOnlySharedMemory). */
export class ReadOnlySharedMemory extends BaseMemory {
  memory: BaseMemory;
  constructor(fields: { memory: BaseMemory }) {
    super();
    this.memory = fields.memory;
  }
  get memoryKeys(): string[] {
    return this.memory.memoryKeys;
  }
  loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    return this.memory.loadMemoryVariables(values);
  }
  async saveContext(_inputValues: InputValues, _outputValues: OutputValues): Promise<void> {}
}

/** Several memories as one (LangChain's CombinedMemory); their memory keys must differ. */
export class CombinedMemory extends BaseMemory {
  memories: BaseMemory[];
  constructor(fields: { memories: BaseMemory[] }) {
    super();
    this.memories = fields.memories;
    const keys = this.memories.flatMap((memory) => memory.memoryKeys);
    const repeated = keys.find((key, i) => keys.indexOf(key) !== i);
    if (repeated) throw new Error(`CombinedMemory: the memory key "${repeated}" is used by more than one memory`);
  }
  get memoryKeys(): string[] {
    return this.memories.flatMap((memory) => memory.memoryKeys);
  }
  async loadMemoryVariables(values: InputValues): Promise<MemoryVariables> {
    const all = await Promise.all(this.memories.map((memory) => memory.loadMemoryVariables(values)));
    return Object.assign({}, ...all);
  }
  async saveContext(inputValues: InputValues, outputValues: OutputValues): Promise<void> {
    for (const memory of this.memories) await memory.saveContext(inputValues, outputValues);
  }
  async clear(): Promise<void> {
    for (const memory of this.memories) await (memory as { clear?: () => Promise<void> }).clear?.();
  }
}
