import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemoriaError, type MemoryStrategy, encodeSessionKey } from "@memoria/core";
import { quoteItem } from "./quoting.js";
import { type TokenCounter, tiktokenCounter } from "./token-counter.js";

export interface ToolCompactionOptions {
  /** Past this many tokens, the oldest tool results are replaced by stubs until the messages fit; if they still do not, the oldest whole turns are left out. */
  maxTokens: number;
  /** The most recent tool results always kept whole. @default 3 */
  keepLast?: number;
  /**
   * Stubs are made in steps of about this much history (counted from the
   * conversation's start, at four characters a token), so the prompt's beginning
   * stays the same from one turn to the next until the budget is passed again,
   * and a provider's prompt cache keeps matching it; `0` stubs as few results as
   * fit, which changes the prompt's beginning on every turn past the budget.
   * @default maxTokens / 2
   */
  stepTokens?: number;
  /** @default js-tiktoken cl100k_base (see tiktokenCounter) */
  tokenCounter?: TokenCounter;
}

/** What a step of `stepTokens` spans in characters: the grid only has to stay put as the conversation grows, not to count exactly. */
const CHARS_PER_TOKEN = 4;

/** Where the messages sit in their stored conversation, so a stub can say how to fetch the original. */
export interface CompactionOrigin {
  /** The conversation's encoded key, as `read_conversation` takes it. */
  conversation?: string;
  /** The stored position of the first message. @default 0 */
  first?: number;
}

function checkOptions(options: ToolCompactionOptions, what: string): { maxTokens: number; keepLast: number; stepTokens: number; count: TokenCounter } {
  const { maxTokens } = options;
  const keepLast = options.keepLast ?? 3;
  if (!Number.isFinite(maxTokens) || maxTokens <= 0) throw new MemoriaError("INVALID_ARGUMENT", `${what}: maxTokens must be > 0, got ${maxTokens}.`);
  if (!Number.isSafeInteger(keepLast) || keepLast < 0)
    throw new MemoriaError("INVALID_ARGUMENT", `${what}: keepLast must be a whole number >= 0, got ${keepLast}.`);
  const stepTokens = options.stepTokens ?? maxTokens / 2;
  if (!Number.isFinite(stepTokens) || stepTokens < 0) throw new MemoriaError("INVALID_ARGUMENT", `${what}: stepTokens must be >= 0, got ${stepTokens}.`);
  return { maxTokens, keepLast, stepTokens, count: options.tokenCounter ?? tiktokenCounter() };
}

const lengthOf = (message: BaseMessage) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)).length;

/** The short message a tool result is replaced by (which call it answered, its size, how to read it back), or the result itself when it is no longer than that. */
function stub(message: ToolMessage, position: number, origin: CompactionOrigin): ToolMessage {
  const length = lengthOf(message);
  const call = `${quoteItem(message.name ?? "tool")} result (call ${quoteItem(message.tool_call_id)}, ${length.toLocaleString("en")} characters)`;
  const where = origin.conversation
    ? `read_conversation "${quoteItem(origin.conversation)}" from ${position} limit 1`
    : `message ${position} of this conversation`;
  const content = `[${call} left out; stored: ${where}]`;
  if (length <= content.length) return message;
  return new ToolMessage({ content, tool_call_id: message.tool_call_id, name: message.name, id: message.id, status: message.status });
}

/**
 * The messages fitted to `maxTokens` without losing what is stored: first the
 * oldest tool results are replaced by short stubs (the newest `keepLast` stay
 * whole); a stub keeps its result's `tool_call_id`, name and status, so every
 * tool call still has its result and every result its call, for any provider.
 * If that is not enough, the oldest whole turns are left out (a turn starts at a
 * human message, so no pair is split). The messages given are not changed (nor,
 * so, anything stored): new messages take the stubs' place.
 *
 * Results that will be stubs are never counted: the messages are counted from
 * the newest back until the budget is passed, and every result older than that
 * point goes (oldest first is the order stubs are made in).
 */
export async function compactToolResults(
  messages: readonly BaseMessage[],
  options: ToolCompactionOptions,
  origin: CompactionOrigin = {},
): Promise<BaseMessage[]> {
  const { maxTokens, keepLast, stepTokens, count } = checkOptions(options, "compactToolResults");
  const first = origin.first ?? 0;
  const results = messages.flatMap((message, i) => (ToolMessage.isInstance(message) ? [i] : []));
  const protectedFrom = keepLast === 0 ? messages.length : (results[results.length - keepLast] ?? 0);
  const sizes = new Array<number>(messages.length).fill(0);
  // The newest messages, whole, from the end back until they pass the budget (or all fit).
  let whole = 0;
  let edge = messages.length;
  while (edge > 0 && whole <= maxTokens) {
    edge--;
    sizes[edge] = await count([messages[edge] as BaseMessage]);
    whole += sizes[edge] as number;
  }
  if (whole <= maxTokens) return [...messages];
  edge++; // messages[edge - 1] is the first that did not fit whole
  const out = [...messages];
  let total = whole - (sizes[edge - 1] as number);
  // Before the edge: every result a stub (unless protected), the rest counted as it is.
  for (let i = 0; i < edge; i++) {
    const message = messages[i] as BaseMessage;
    if (ToolMessage.isInstance(message) && i < protectedFrom) out[i] = stub(message, first + i, origin);
    sizes[i] = await count([out[i] as BaseMessage]);
    total += sizes[i] as number;
  }
  // Past the edge, oldest first, until it fits; then on to the next step's start.
  let boundary = edge;
  let stepEnd: number | undefined;
  for (const i of results) {
    if (i < edge) continue;
    if (i >= protectedFrom) break;
    if (total <= maxTokens) {
      stepEnd ??= nextStep(messages, boundary, stepTokens * CHARS_PER_TOKEN);
      if (i >= stepEnd) break;
    }
    boundary = i + 1;
    const replaced = stub(messages[i] as ToolMessage, first + i, origin);
    if (replaced === messages[i]) continue; // a result already shorter than its stub stays
    const size = await count([replaced]);
    total -= (sizes[i] as number) - size;
    sizes[i] = size;
    out[i] = replaced;
  }
  if (total <= maxTokens) return out;
  // Whole turns left out as well: from a turn's start at or after the next step's start.
  const from = fitFrom(out, sizes, maxTokens);
  const stepped = nextTurn(out, nextStep(messages, from, stepTokens * CHARS_PER_TOKEN));
  return out.slice(stepped < out.length ? stepped : from);
}

/** The first turn's start (a human message) at or after `from`; the end if none. */
function nextTurn(messages: readonly BaseMessage[], from: number): number {
  let i = from;
  while (i < messages.length && (messages[i] as BaseMessage).getType() !== "human") i++;
  return i;
}

/**
 * The first position at or after `boundary` where a new step of `stepChars` begins,
 * steps counted in characters from the first message: a grid that appending
 * messages never moves, so the stubs, made up to its lines, stay where they are.
 */
function nextStep(messages: readonly BaseMessage[], boundary: number, stepChars: number): number {
  if (stepChars <= 0 || boundary === 0) return boundary;
  let before = 0; // characters before messages[i]
  for (let i = 0; i < boundary - 1; i++) before += lengthOf(messages[i] as BaseMessage);
  const step = Math.floor(before / stepChars);
  for (let i = boundary - 1; i < messages.length; i++) {
    before += lengthOf(messages[i] as BaseMessage);
    if (Math.floor(before / stepChars) > step) return i + 1;
  }
  return messages.length;
}

/** The earliest turn start (a human message) from which the messages' sizes add up to at most `budget`; the end if none. */
function fitFrom(messages: readonly BaseMessage[], sizes: readonly number[], budget: number): number {
  let sum = 0;
  let from = messages.length;
  for (let i = messages.length - 1; i > 0; i--) {
    sum += sizes[i] as number;
    if (sum > budget) break;
    if ((messages[i] as BaseMessage).getType() === "human") from = i;
  }
  return from;
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
