import type { BaseMessage } from "@langchain/core/messages";
import { type JsonValue, SCOPE_FIELD } from "@memoria/core";
import { contentWords } from "@memoria/recall";
import type { Fact } from "../long-term/facts.js";
import { isoDay } from "../long-term/recall-excerpt.js";
import type { RecalledPassage } from "../long-term/recall-memory.js";
import { memoryBlock } from "../memory-block.js";
import { quoteItem, quoteLine, quoteMessages, quoteText } from "../quoting.js";

/** Facts ordered by how many content words they share with `query` (then newest first); every fact is kept. */
export function rankFacts(facts: readonly Fact[], query: string): Fact[] {
  const wanted = new Set(contentWords(query));
  const score = (fact: Fact) => contentWords(`${fact.subject} ${fact.statement}`).filter((word) => wanted.has(word)).length;
  return facts
    .map((fact, order) => ({ fact, order, score: score(fact) }))
    .sort((a, b) => b.score - a.score || b.order - a.order)
    .map(({ fact }) => fact);
}

/** One fact as a tool shows it: its id (to correct or forget it), statement, subject, dates and source. */
export function factLine(fact: Fact): string {
  const when =
    fact.until === undefined
      ? `since ${isoDay(fact.since)}`
      : `${isoDay(fact.since)} to ${isoDay(fact.until)}${fact.replacedBy ? `, replaced by ${fact.replacedBy}` : ""}`;
  // A fact told through a tool outside any conversation names the user's scope record, which is no conversation.
  const from = fact.source.session.split("&").some((pair) => pair.startsWith(`${SCOPE_FIELD}=`))
    ? "told through a memory tool"
    : `from conversation ${quoteItem(fact.source.session)}, message ${fact.source.message}`;
  return `- [${fact.id}] ${quoteItem(fact.statement)} (about ${quoteItem(fact.subject)}; ${when}; ${from})`;
}

/** What `search_memory` answers: the facts that hold, those that held before when asked for, and recalled passages. */
export function searchAnswer(current: readonly Fact[], past: readonly Fact[], passages: readonly RecalledPassage[]): string {
  const blocks: string[] = [];
  if (current.length > 0) blocks.push(memoryBlock("facts", "Facts that hold, best match first", current.map(factLine).join("\n")));
  if (past.length > 0) blocks.push(memoryBlock("facts", "Facts that no longer hold, with the dates they held", past.map(factLine).join("\n")));
  if (passages.length > 0) {
    const excerpts = passages.map((passage) => {
      const head = `From conversation ${passage.conversation}, messages ${passage.from} to ${passage.to}, on ${isoDay(passage.at)}:`;
      return `${quoteLine(head)}\n${quoteMessages(passage.messages)}`;
    });
    blocks.push(memoryBlock("recall", "Passages recalled from earlier conversations", excerpts.join("\n\n")));
  }
  return blocks.length > 0 ? blocks.join("\n") : "Nothing in memory matches.";
}

/** A page of a conversation, each message with its position. */
export function conversationPage(conversation: string, from: number, messages: readonly BaseMessage[], total: number): string {
  const lines = messages.map((message, i) => `[${from + i}] ${quoteMessages([message])}`);
  const next = from + messages.length < total ? `; the next page starts at ${from + messages.length}` : "";
  const label = `Conversation ${conversation}, messages ${from} to ${from + messages.length - 1} of ${total}${next}`;
  return memoryBlock("conversation", quoteLine(label), lines.join("\n"));
}

/** The profile after a change, as the tool reports it. */
export function profileAnswer(profile: JsonValue): string {
  const text = typeof profile === "string" ? profile : JSON.stringify(profile, null, 2);
  return memoryBlock("profile", "The profile now reads", quoteText(text));
}
