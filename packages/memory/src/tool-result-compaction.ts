import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemoriaError, type MemoryStrategy, encodeSessionKey } from "@memoria/core";
import { quoteItem } from "./memory-block.js";
import { type TokenCounter, tiktokenCounter } from "./token-counter.js";
import { cutToFit } from "./turn-window.js";

export interface ToolCompactionOptions {
  /** Past this many tokens, the oldest tool results are replaced by stubs until the messages fit; if they still do not, the oldest whole turns are left out. */
  maxTokens: number;
  /** The most recent tool results always kept whole. @default 3 */
  keepLast?: number;
  /** @default js-tiktoken cl100k_base (see tiktokenCounter) */
  tokenCounter?: TokenCounter;
}

/** Where the messages sit in their stored conversation, so a stub can say how to fetch the original. */
export interface CompactionOrigin {
  /** The conversation's encoded key, as `read_conversation` takes it. */
  conversation?: string;
  /** The stored position of the first message. @default 0 */
  first?: number;
}

function checkOptions(options: ToolCompactionOptions, what: string): { maxTokens: number; keepLast: number; count: TokenCounter } {
  const { maxTokens } = options;
  const keepLast = options.keepLast ?? 3;
  if (!Number.isFinite(maxTokens) || maxTokens <= 0) throw new MemoriaError("INVALID_ARGUMENT", `${what}: maxTokens must be > 0, got ${maxTokens}.`);
  if (!Number.isSafeInteger(keepLast) || keepLast < 0) throw new MemoriaError("INVALID_ARGUMENT", `${what}: keepLast must be a whole number >= 0, got ${keepLast}.`);
  return { maxTokens, keepLast, count: options.tokenCounter ?? tiktokenCounter() };
}

/** The short text a tool result is replaced by: which call it answered, its size, and how to read it back. */
function stub(message: ToolMessage, tokens: number, position: number, origin: CompactionOrigin): string {
  const call = `${quoteItem(message.name ?? "tool")} result (call ${quoteItem(message.tool_call_id)}, ${tokens} tokens)`;
  const where = origin.conversation ? `read_conversation "${quoteItem(origin.conversation)}" from ${position} limit 1` : `message ${position} of this conversation`;
  return `[${call} left out; stored: ${where}]`;
}

/**
 * The messages fitted to `maxTokens` without losing what is stored: first the
 * oldest tool results are replaced by short stubs (the newest `keepLast` stay
 * whole); a stub keeps its result's `tool_call_id`, name and status, so every
 * tool call still has its result and every result its call, for any provider.
 * If that is not enough, the oldest whole turns are left out (a turn starts at a
 * human message, so no pair is split). The messages given are not changed (nor,
 * so, anything stored): new messages take the stubs' place.
 */
export async function compactToolResults(messages: readonly BaseMessage[], options: ToolCompactionOptions, origin: CompactionOrigin = {}): Promise<BaseMessage[]> {
  const { maxTokens, keepLast, count } = checkOptions(options, "compactToolResults");
  const sizes = await Promise.all(messages.map((message) => count([message])));
  let total = sizes.reduce((sum, size) => sum + size, 0);
  if (total <= maxTokens) return [...messages];
  const results = messages.flatMap((message, i) => (ToolMessage.isInstance(message) ? [i] : []));
  const out = [...messages];
  for (const i of results.slice(0, Math.max(0, results.length - keepLast))) {
    if (total <= maxTokens) break;
    const original = messages[i] as ToolMessage;
    const replaced = new ToolMessage({
      content: stub(original, sizes[i] as number, (origin.first ?? 0) + i, origin),
      tool_call_id: original.tool_call_id,
      name: original.name,
      id: original.id,
      status: original.status,
    });
    const size = await count([replaced]);
    if (size >= (sizes[i] as number)) continue; // a result already shorter than its stub stays
    total -= (sizes[i] as number) - size;
    out[i] = replaced;
  }
  return total <= maxTokens ? out : out.slice(await cutToFit(out, maxTokens, count));
}

/**
 * A strategy for tool-heavy conversations: the whole stored history, with the
 * oldest tool results replaced by stubs that name the call and where to read it
 * (`read_conversation`) once the history takes more than `maxTokens`. Nothing
 * stored changes; a result is only left out of the prompt.
 */
export function toolResultCompaction(options: ToolCompactionOptions): MemoryStrategy {
  const { maxTokens, keepLast } = checkOptions(options, "toolResultCompaction");
  return {
    name: `tool-result-compaction(max=${maxTokens}, keep=${keepLast})`,
    async load(context) {
      return compactToolResults(await context.read(), options, { conversation: encodeSessionKey(context.sessionKey), first: 0 });
    },
  };
}
