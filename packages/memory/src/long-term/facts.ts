import { memoryBlock } from "../memory-block.js";
import { quoteItem } from "../quoting.js";

/**
 * A fact about a subject, with where it came from and the time it held: `until`
 * is set once a later fact contradicted it (and `replacedBy` names that fact).
 */
export interface Fact {
  id: string;
  /** Who or what the fact is about, as the model named it ("Ada", "the user"). */
  subject: string;
  statement: string;
  /** The session (encoded key) and message position it was learned from. */
  source: { session: string; message: number };
  /** When it became true, as far as memoria knows: when it was learned (ISO 8601). */
  since: string;
  /** When a later fact replaced it (ISO 8601); absent while it holds. */
  until?: string;
  replacedBy?: string;
  /** When the user asked to forget it (ISO 8601): closed, kept for audit, never shown to a model again. */
  withdrawn?: string;
}

/** What the extraction model reports for one new fact. */
export interface ExtractedFact {
  subject: string;
  statement: string;
  /** Which of the given messages (0-based) it came from. @default the last */
  message?: number;
  /** Ids of known facts this one contradicts or updates. */
  replaces?: string[];
}

export interface FactsData {
  facts: Fact[];
  /** The next fact's number, so ids never repeat. */
  next: number;
}

/** True while no later fact has replaced it (and it was not withdrawn). */
export function holds(fact: Fact): boolean {
  return fact.until === undefined;
}

/** True for a fact that a model may still see, as holding or as replaced: not withdrawn. */
export function shownToModel(fact: Fact): boolean {
  return fact.withdrawn === undefined;
}

/**
 * Adds what the model extracted from a batch: each new fact closes the facts it
 * replaces (they stay, with `until`), and a statement already held about the same
 * subject is not added twice.
 */
export function applyExtracted(
  data: FactsData | undefined,
  extracted: readonly ExtractedFact[],
  origin: { session: string; first: number; count: number; now: number },
): FactsData {
  const facts = (data?.facts ?? []).map((fact) => ({ ...fact }));
  let next = data?.next ?? 1;
  const when = new Date(origin.now).toISOString();
  const byId = new Map(facts.map((fact) => [fact.id, fact]));
  for (const item of extracted) {
    const subject = item.subject.trim();
    const statement = item.statement.trim();
    if (!subject || !statement) continue;
    const same = facts.find((fact) => holds(fact) && sameText(fact.subject, subject) && sameText(fact.statement, statement));
    if (same) continue;
    const id = `f${next++}`;
    for (const replaced of item.replaces ?? []) {
      const old = byId.get(replaced);
      if (old && holds(old)) {
        old.until = when;
        old.replacedBy = id;
      }
    }
    const offset =
      Number.isInteger(item.message) && (item.message as number) >= 0 && (item.message as number) < origin.count ? (item.message as number) : origin.count - 1;
    const fact: Fact = { id, subject, statement, source: { session: origin.session, message: origin.first + offset }, since: when };
    facts.push(fact);
    byId.set(id, fact);
  }
  return { facts, next };
}

function sameText(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** Drops facts learned before `cutoff` (epoch ms): retention. */
export function retain(data: FactsData, cutoff: number | undefined): FactsData {
  if (cutoff === undefined) return data;
  return { ...data, facts: data.facts.filter((fact) => Date.parse(fact.since) >= cutoff) };
}

/** The facts as the prompt shows them: what holds, then (dated) what no longer does. */
export function renderFacts(current: readonly Fact[], past: readonly Fact[]): string {
  const lines = current.map((fact) => `- ${quoteItem(fact.statement)} (since ${fact.since.slice(0, 10)})`);
  if (past.length > 0) {
    lines.push("No longer true:", ...past.map((fact) => `- ${quoteItem(fact.statement)} (until ${(fact.until ?? "").slice(0, 10)})`));
  }
  return memoryBlock("facts", "Long-term memory: facts learned in earlier conversations", lines.join("\n"));
}
