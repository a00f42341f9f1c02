import { type BaseMessage, getBufferString } from "@langchain/core/messages";
import { type HistoryStore, LockLostError, type MemoryStrategy, MAX_TITLE_LENGTH, type SessionKey } from "@memoria/core";
import { type SummaryModel, textOf } from "./summarizer.js";
import { type MemoryBudget, unlessSpent } from "./memory-budget.js";
import { reportOnce } from "./long-term/scope-work.js";
import { modelName } from "./model-name.js";

export const DEFAULT_TITLE_PROMPT = `Write a short title (at most six words) for the conversation below. Reply with the title only, without quotes.

{conversation}

Title:`;

export interface ConversationTitlesOptions {
  /** The model that writes titles: any chat model or LLM, or a runnable from prompt text to text. */
  model: SummaryModel;
  /** With `{conversation}` where the first messages go. @default DEFAULT_TITLE_PROMPT */
  prompt?: string;
  /** How many of the first messages the model sees. @default 4 */
  messages?: number;
  /** Where a failure to title a session goes; the turn is never affected. @default a console warning */
  onError?: (error: unknown, key: SessionKey) => void;
  /** Counts the title calls against a budget per scope (`memoryBudget`); spent, the session gets no title (said once per period). @default no budget */
  budget?: MemoryBudget;
}

/** A strategy that also titles its sessions; `idle()` resolves once every title asked for is written or given up. */
export interface TitlingStrategy extends MemoryStrategy {
  idle(): Promise<void>;
}

/** The model's answer as a title: one line, no quotes or control characters, within the store's limit. */
export function cleanTitle(text: string): string {
  const line =
    text
      .replace(/[\u0000-\u001f\u007f]+/g, "\n")
      .split("\n")
      .map((part) => part.trim())
      .find(Boolean) ?? "";
  const bare = line
    .replace(/^(title:\s*)/i, "")
    .replace(/^["'“”«]+|["'“”»]+$/g, "")
    .trim();
  return bare.length > 80 ? `${bare.slice(0, 79).trimEnd()}…` : bare.slice(0, MAX_TITLE_LENGTH);
}

/**
 * Adds titles to a strategy: after a session's first turn is saved, the model is
 * asked for a short title, which goes to the session's info (`setInfo`). The work
 * runs after the turn, not inside it: the call resolves as soon as its turn is
 * stored. It writes under the session's turn lock and only to a session that has
 * no title yet, so an app's own title is never overwritten, and a session erased
 * meanwhile is not brought back (the erased session's lock is gone: the write is
 * refused). Stores without `setInfo` are left alone.
 */
export function withTitles(inner: MemoryStrategy, options: ConversationTitlesOptions): TitlingStrategy {
  const pending = new Set<Promise<void>>();
  const prompt = options.prompt ?? DEFAULT_TITLE_PROMPT;
  const first = options.messages ?? 4;
  const onError =
    options.onError ??
    ((error: unknown, key: SessionKey) => console.warn(`memoria: no title for session ${JSON.stringify(key)}: ${(error as Error)?.message ?? error}`));

  async function title(store: HistoryStore, key: SessionKey, added: readonly BaseMessage[]): Promise<void> {
    const info = await store.info?.(key);
    if (!info || info.title !== undefined) return;
    const opening = info.messageCount === added.length ? added.slice(0, first) : (await store.read(key)).slice(0, first);
    const asked = prompt.replace("{conversation}", getBufferString([...opening]));
    const spent = (error: unknown) => reportOnce(error, { scope: key, session: key, memory: "titles", model: modelName(options.model) });
    const answer = await unlessSpent(options.budget, store, key, { name: "title", prompt: asked }, () => options.model.invoke(asked), spent);
    if (answer === undefined) return; // spent: no title (an app can still set one)
    const text = cleanTitle(textOf(answer));
    if (!text) return;
    const lock = await store.lock?.(key);
    try {
      const now = await store.info?.(key);
      if (now && now.title === undefined) await store.setInfo?.(key, { title: text }, { lock });
    } catch (error) {
      if (!LockLostError.isInstance(error)) throw error; // erased meanwhile: no title to give
    } finally {
      await lock?.release();
    }
  }

  return {
    ...inner,
    name: `${inner.name}+titles`,
    load: (context) => inner.load(context),
    async afterSave(context) {
      await inner.afterSave?.(context);
      const { store, sessionKey, added } = context;
      if (!store?.setInfo || !store.info) return;
      const job: Promise<void> = title(store, sessionKey, added)
        .catch((error: unknown) => onError(error, sessionKey))
        .finally(() => pending.delete(job));
      pending.add(job);
    },
    async idle() {
      while (pending.size > 0) await Promise.all(pending);
    },
  };
}
