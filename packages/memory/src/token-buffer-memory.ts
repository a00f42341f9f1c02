import { MemoriaError, type MemoryLoadContext, type MemoryStrategy } from "@memoria/core";
import { type TokenCounter, tiktokenCounter } from "./token-counter.js";
import { cutToFit } from "./turn-window.js";

export interface TokenBufferMemoryOptions {
  /** The most tokens of history that reach the prompt. */
  maxTokens: number;
  /** @default js-tiktoken cl100k_base (see tiktokenCounter) */
  tokenCounter?: TokenCounter;
  /**
   * When the history outgrows `maxTokens`, whole turns are dropped until it takes
   * at most this fraction of it; the window's start then stays put until the
   * budget is exceeded again, so the prompt's prefix is the same turn after turn
   * (what prompt caches reward). 1 drops one turn at a time.
   * @default 0.7
   */
  refillFraction?: number;
  /** Where the window's start is kept in the session's state. @default "token-buffer" */
  stateName?: string;
}

/**
 * The most recent whole turns that fit in `maxTokens` (LangChain's
 * ConversationTokenBufferMemory), read from the store's end: the first time in
 * growing chunks, afterwards from the remembered start of the window.
 */
export function tokenBufferMemory(options: TokenBufferMemoryOptions): MemoryStrategy {
  const { maxTokens } = options;
  if (!Number.isFinite(maxTokens) || maxTokens <= 0) throw new MemoriaError("INVALID_ARGUMENT", `tokenBufferMemory: maxTokens must be > 0, got ${maxTokens}.`);
  const refill = options.refillFraction ?? 0.7;
  if (!(refill > 0 && refill <= 1)) throw new MemoriaError("INVALID_ARGUMENT", `tokenBufferMemory: refillFraction must be in (0, 1], got ${refill}.`);
  const count = options.tokenCounter ?? tiktokenCounter();
  const name = options.stateName ?? "token-buffer";

  /** No window yet: read backwards in doubling chunks until past the budget, then cut at a turn start. */
  async function initialWindow(context: MemoryLoadContext, total: number): Promise<number> {
    let size = 32;
    for (;;) {
      const tail = await context.read({ last: Math.min(size, total) });
      if (tail.length >= total || (await count(tail)) > maxTokens) {
        return total - tail.length + (await cutToFit(tail, Math.floor(maxTokens * refill), count));
      }
      size *= 2;
    }
  }

  return {
    name: `token-buffer(max=${maxTokens})`,
    async load(context) {
      const total = await context.count();
      const saved = (await context.state.get(name)) as { start?: number } | undefined;
      let start = typeof saved?.start === "number" && saved.start <= total ? saved.start : await initialWindow(context, total);
      const window = await context.read({ last: total - start });
      if ((await count(window)) <= maxTokens) {
        if (saved?.start !== start) await context.state.set(name, { start });
        return window;
      }
      const cut = await cutToFit(window, Math.floor(maxTokens * refill), count);
      start += cut;
      await context.state.set(name, { start });
      return window.slice(cut);
    },
  };
}
