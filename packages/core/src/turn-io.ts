import { AIMessage, type BaseMessage, HumanMessage, coerceMessageLikeToMessage, isBaseMessage } from "@langchain/core/messages";
import { agentStepMessages } from "./agent-steps.js";
import { MemoriaError } from "./errors.js";

/** Which keys of a dict input or output hold messages (LangChain's field names). */
export interface TurnKeys {
  inputMessagesKey?: string;
  outputMessagesKey?: string;
  historyMessagesKey?: string;
}

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !isBaseMessage(value);
}

function preview(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}

function toMessages(value: unknown, fallback: (text: string) => BaseMessage, code: "INVALID_INPUT" | "INVALID_OUTPUT"): BaseMessage[] {
  if (typeof value === "string") return [fallback(value)];
  if (isBaseMessage(value)) return [value];
  if (Array.isArray(value)) {
    return value.map((item, index) => {
      try {
        return coerceMessageLikeToMessage(item as never);
      } catch (error) {
        throw new MemoriaError(code, `Item ${index} is not a message: ${preview(item)}.`, { cause: error });
      }
    });
  }
  const side = code === "INVALID_INPUT" ? "input" : "output";
  throw new MemoriaError(code, `Expected the ${side} to be a string, a message or a list of messages; got ${preview(value)}.`);
}

function dictKey(value: Dict, explicit: string | undefined, fallback: string): string {
  if (explicit !== undefined) return explicit;
  const keys = Object.keys(value).filter((key) => key !== "intermediateSteps");
  return keys.length === 1 ? (keys[0] as string) : fallback;
}

/**
 * The messages a turn's input brings, as LangChain reads them: a string is a human
 * message; a dict gives its `inputMessagesKey` (or its only key, or `input`).
 * Message-likes (`["human", "hi"]`, `{ role, content }`) are coerced to messages.
 */
export function inputMessagesOf(input: unknown, keys: TurnKeys): BaseMessage[] {
  let value = input;
  if (isDict(input)) {
    const key = dictKey(input, keys.inputMessagesKey, "input");
    value = input[key];
    if (Array.isArray(value) && Array.isArray(value[0]) && !isMessageTuple(value[0])) value = value[0];
    if (value === undefined) {
      const fields = Object.keys(input);
      const hint = fields.length
        ? ` Its fields: ${fields.map((field) => `"${field}"`).join(", ")}; set inputMessagesKey to the one that holds the user's message.`
        : "";
      throw new MemoriaError("INVALID_INPUT", `The input has no "${key}" field holding the turn's messages; got ${preview(input)}.${hint}`);
    }
  }
  return toMessages(value, (text) => new HumanMessage(text), "INVALID_INPUT");
}

function isMessageTuple(value: unknown[]): boolean {
  return value.length === 2 && typeof value[0] === "string" && !Array.isArray(value[1]);
}

/** The same message: the same object, or one with the same id, or (without ids) the same type and content. */
function sameMessage(a: BaseMessage, b: BaseMessage): boolean {
  if (a === b) return true;
  if (a.getType() !== b.getType()) return false;
  if (a.id != null && b.id != null) return a.id === b.id;
  return JSON.stringify(a.content) === JSON.stringify(b.content);
}

/**
 * What an output list adds to the messages the runnable was given: agents that
 * return the whole thread (`{ messages }` from LangChain v1's `createAgent` or
 * LangGraph's ReAct agent) give back the history and the input first. Strips that
 * prefix, or else everything up to the turn's last input message; a list that
 * does not echo the input is kept whole.
 */
export function newMessagesOf(output: BaseMessage[], sent: readonly BaseMessage[], input: readonly BaseMessage[]): BaseMessage[] {
  if (sent.length === 0 || output.length === 0) return output;
  let n = 0;
  while (n < sent.length && n < output.length && sameMessage(output[n] as BaseMessage, sent[n] as BaseMessage)) n++;
  if (n === sent.length) return output.slice(n);
  const last = input[input.length - 1];
  if (last === undefined) return output;
  for (let i = output.length - 1; i >= 0; i--) if (sameMessage(output[i] as BaseMessage, last)) return output.slice(i + 1);
  return output;
}

/**
 * The messages a turn's output adds: a string is an AI message; a dict gives its
 * `outputMessagesKey` (or its only key, or `output`); an LLM result gives its first
 * generation's message. Every message of a list is kept, in order, but for the
 * messages the runnable was given (`sent`, its history and input), which a
 * thread-returning agent echoes first.
 */
export function outputMessagesOf(output: unknown, keys: TurnKeys, sent?: () => { all: readonly BaseMessage[]; input: readonly BaseMessage[] }): BaseMessage[] {
  let value = output;
  let steps: BaseMessage[] | undefined;
  if (isDict(output)) {
    // A classic AgentExecutor with returnIntermediateSteps: its tool calls and results come first.
    steps = agentStepMessages(output.intermediateSteps);
    const generations = output.generations as { message?: unknown; text?: string }[][] | undefined;
    if (generations !== undefined) {
      const first = generations[0]?.[0];
      value = first?.message ?? first?.text;
    } else {
      const key = dictKey(output, keys.outputMessagesKey, "output");
      if (!Object.hasOwn(output, key)) {
        const found =
          Object.keys(output)
            .map((k) => JSON.stringify(k))
            .join(", ") || "none";
        throw new MemoriaError(
          "INVALID_OUTPUT",
          keys.outputMessagesKey === undefined
            ? `The runnable returned an object with keys ${found} and no "output" key; set outputMessagesKey to the key that holds the answer.`
            : `The runnable's output has no "${key}" key (outputMessagesKey); its keys are ${found}.`,
        );
      }
      value = output[key];
    }
  }
  let answer = toMessages(value, (text) => new AIMessage(text), "INVALID_OUTPUT");
  if (sent && Array.isArray(value)) {
    const { all, input } = sent();
    answer = newMessagesOf(answer, all, input);
  }
  return steps ? [...steps, ...answer] : answer;
}

/**
 * What the wrapped runnable receives: with `historyMessagesKey`, the input plus the
 * history under that key; otherwise the history followed by the input's messages,
 * under `inputMessagesKey` for a dict input or as a bare message list.
 */
export function withHistory(input: unknown, history: readonly BaseMessage[], inputMessages: BaseMessage[], keys: TurnKeys): unknown {
  if (keys.historyMessagesKey !== undefined) {
    if (!isDict(input)) {
      throw new MemoriaError(
        "INVALID_INPUT",
        `With historyMessagesKey "${keys.historyMessagesKey}" the input must be an object such as ` +
          `{ ${keys.inputMessagesKey ?? "input"}: "..." }; got ${preview(input)}.`,
      );
    }
    return { ...input, [keys.historyMessagesKey]: history };
  }
  // concat, not a spread: it copies a long history in one block instead of through the iterator protocol.
  return withMessages(input, history.concat(inputMessages), keys);
}

/** The input with `messages` (the history, then the input's messages) in place of its messages. */
export function withMessages(input: unknown, messages: BaseMessage[], keys: TurnKeys): unknown {
  if (isDict(input) && keys.inputMessagesKey !== undefined) return { ...input, [keys.inputMessagesKey]: messages };
  return messages;
}

/**
 * Adds to a prompt's "Missing value for input variable `x`" (LangChain's
 * INVALID_PROMPT_INPUT) what memoria's wiring has to do with it: most often, the
 * prompt's MessagesPlaceholder is not named as `historyMessagesKey` says. The
 * error keeps its type and fields; its message gains the hint.
 */
export function withWiringHint(error: unknown, input: unknown, keys: TurnKeys): unknown {
  const code = (error as { lc_error_code?: unknown } | undefined)?.lc_error_code;
  const found = code === "INVALID_PROMPT_INPUT" ? /Missing value for input variable `([^`]+)`/.exec((error as Error).message) : null;
  const missing = found?.[1];
  if (missing === undefined || (isDict(input) && missing in input) || missing === keys.historyMessagesKey) return error;
  const set = `historyMessagesKey: "${missing}"`;
  const hint =
    keys.historyMessagesKey === undefined
      ? `If "${missing}" is the prompt's MessagesPlaceholder for the conversation, set ${set} on RunnableWithMessageHistory; otherwise pass "${missing}" in the input.`
      : `The history goes under historyMessagesKey "${keys.historyMessagesKey}": if the prompt's MessagesPlaceholder is "${missing}", set ${set}; otherwise pass "${missing}" in the input.`;
  const at = (found?.index ?? 0) + (found?.[0].length ?? 0);
  const message = (error as Error).message;
  (error as Error).message = `${message.slice(0, at)}. memoria: ${hint}${message.slice(at)}`;
  return error;
}
