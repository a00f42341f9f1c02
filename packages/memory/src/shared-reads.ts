import type { BaseMessage } from "@langchain/core/messages";
import type { MemoryLoadContext, ReadOptions } from "@memoria/core";

/**
 * The context with its whole-history read made once for every part: a later whole
 * read gets a copy of the array, a read of the last n its tail, a count its length.
 * Other reads, and any read after a part trimmed the session, go to the store as
 * before. `combineMemory` hands its parts one; recall shares its own reads of the
 * conversation through one too.
 */
export function sharingReads(context: MemoryLoadContext): MemoryLoadContext {
  let whole: Promise<BaseMessage[]> | undefined;
  const read = (options?: ReadOptions): Promise<BaseMessage[]> => {
    const last = options?.last;
    if (options?.sealed) return context.read(options);
    if (last === undefined) {
      whole ??= context.read(options);
      return whole.then((messages) => messages.slice());
    }
    // An odd `last` goes to the store, which says what is wrong with it.
    if (!whole || !Number.isSafeInteger(last) || last < 0) return context.read(options);
    return whole.then((messages) => messages.slice(Math.max(0, messages.length - last)));
  };
  const trim = context.trim;
  return {
    sessionKey: context.sessionKey,
    read,
    // The whole history read this turn has its length: no count goes to the store.
    count: () => (whole ? whole.then((messages) => messages.length) : context.count()),
    state: context.state,
    trim:
      trim &&
      ((oldest: number) => {
        whole = undefined;
        return trim(oldest);
      }),
    input: context.input,
    store: context.store,
    config: context.config,
  };
}
