import { type BaseMessage, SystemMessage } from "@langchain/core/messages";
import { MemoriaError, type MemoryStrategy } from "@memoria/core";
import { isMemoryMessage, memoryMessage } from "./memory-block.js";
import { sharingReads } from "./shared-reads.js";
import { textOf } from "./summarizer.js";

/**
 * Several strategies as one: each loads in turn and their messages are joined in
 * the order given, with the leading system messages (what facts, profiles and
 * recall add) merged into one, since some providers accept only one system
 * message; memory blocks placed in a user message (`placement: "user"`) are merged
 * into one user message after it. The parts share one read of the session's whole
 * history per turn (recall showing a passage of this conversation, then a buffer
 * reading it all: one read), so a part must not change the messages it reads. After
 * a save, each strategy's `afterSave` runs, in order.
 *
 * ```ts
 * memory: combineMemory(workingMemory({ model, scope: ["userId"] }), factMemory({ model, scope: ["userId"] }), windowMemory({ k: 4 }))
 * ```
 */
export function combineMemory(...strategies: MemoryStrategy[]): MemoryStrategy & { idle(): Promise<void> } {
  if (strategies.length === 0) throw new MemoriaError("INVALID_ARGUMENT", "combineMemory needs at least one strategy.");
  const afterSaves = strategies.filter((strategy) => strategy.afterSave);
  const combined: MemoryStrategy & { idle(): Promise<void> } = {
    name: strategies.map((strategy) => strategy.name).join(" + "),
    readonly: strategies.every((strategy) => strategy.readonly),
    // The first history read among the parts (facts and recall read state and other
    // sessions, not this one's messages), so the wrapper can take it with the turn lock.
    // Safe whatever the parts do first: a lock's read is only handed to a read asking
    // for the same, and never after the turn wrote or trimmed messages.
    firstRead: strategies.find((strategy) => strategy.firstRead !== undefined)?.firstRead,
    async load(context) {
      const system: string[] = [];
      const user: string[] = [];
      const rest: BaseMessage[] = [];
      const shared = sharingReads(context);
      for (const strategy of strategies) {
        for (const message of await strategy.load(shared)) {
          if (rest.length === 0 && message.getType() === "system") system.push(textOf(message));
          else if (isMemoryMessage(message) && message.getType() === "human") user.push(textOf(message));
          else rest.push(message);
        }
      }
      const merged = (texts: string[], make: (text: string) => BaseMessage) => (texts.length ? [make(texts.join("\n\n"))] : []);
      return [...merged(system, (text) => new SystemMessage(text)), ...merged(user, (text) => memoryMessage(text, "user")), ...rest];
    },
    async idle() {
      await Promise.all(strategies.map((strategy) => (strategy as { idle?: () => Promise<void> }).idle?.()));
    },
  };
  if (afterSaves.length > 0) {
    return {
      ...combined,
      afterSaveUnlocked: afterSaves.every((strategy) => strategy.afterSaveUnlocked === true),
      async afterSave(context) {
        for (const strategy of afterSaves) await strategy.afterSave?.(context);
      },
    };
  }
  return combined;
}
