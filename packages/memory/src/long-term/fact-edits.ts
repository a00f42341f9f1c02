import { type HistoryStore, MemoriaError, type SessionKeyFilter, scopeKeyOf } from "@memoria/core";
import { type Fact, type FactsData, applyExtracted, holds } from "./facts.js";
import { editScopeData, readScopeRecord } from "./scope-record.js";

/** The state name `factMemory` keeps its facts under, unless given another. */
export const FACTS_STATE = "facts";

/** A fact as a caller states it (a tool the model called, an app, the studio). */
export interface StatedFact {
  /** Who or what it is about ("the user", "Ada"). */
  subject: string;
  statement: string;
  /** Ids of facts it corrects: they are closed (`until`), kept, and shown as no longer true. */
  replaces?: readonly string[];
}

/**
 * Where a stated fact came from: the conversation (encoded key) and how many of
 * its messages were stored when it was said (the turn is there or just after it).
 */
export interface FactSource {
  session: string;
  message: number;
}

/** A scope's facts, oldest first, withdrawn ones included (for audit). */
export async function readFacts(store: HistoryStore, scope: SessionKeyFilter, stateName = FACTS_STATE): Promise<Fact[]> {
  return (await readScopeRecord<FactsData>(store, scopeKeyOf(scope), stateName))?.data?.facts ?? [];
}

/**
 * Records a fact in the scope's facts, as `factMemory` would have extracted it:
 * the facts it replaces are closed, and a statement that already holds is not
 * added twice. Returns the fact that holds (the new one, or the one it matched).
 */
export async function rememberFact(store: HistoryStore, scope: SessionKeyFilter, fact: StatedFact, source: FactSource, stateName = FACTS_STATE): Promise<Fact> {
  const subject = typeof fact.subject === "string" ? fact.subject.trim() : "";
  const statement = typeof fact.statement === "string" ? fact.statement.trim() : "";
  if (!subject || !statement) throw new MemoriaError("INVALID_ARGUMENT", "A fact needs a non-empty subject and statement.");
  const same = (item: Fact) => holds(item) && item.subject.toLowerCase() === subject.toLowerCase() && item.statement.toLowerCase() === statement.toLowerCase();
  let held: Fact | undefined;
  await editScopeData<FactsData>(store, scope, stateName, (current) => {
    for (const id of fact.replaces ?? []) {
      if (!current?.facts.some((old) => old.id === id && holds(old)))
        throw new MemoriaError("INVALID_ARGUMENT", `No fact "${id}" holds in this scope to be replaced.`);
    }
    // applyExtracted leaves out a statement that already holds: then nothing is written.
    const next = applyExtracted(current, [{ subject, statement, replaces: [...(fact.replaces ?? [])] }], {
      session: source.session,
      first: source.message,
      count: 1,
      now: Date.now(),
    });
    held = next.facts.findLast(same);
    return next.next === (current?.next ?? 1) ? undefined : next;
  });
  return held as Fact;
}

/**
 * Forgets a fact of the scope: `withdraw` closes it and marks it withdrawn (kept
 * for audit, never shown to a model again); `erase` removes it from the record.
 * Returns the fact as it was, or undefined when the scope has no such fact.
 */
export async function forgetFact(
  store: HistoryStore,
  scope: SessionKeyFilter,
  id: string,
  how: "withdraw" | "erase" = "withdraw",
  stateName = FACTS_STATE,
): Promise<Fact | undefined> {
  let found: Fact | undefined;
  await editScopeData<FactsData>(store, scope, stateName, (current) => {
    found = current?.facts.find((fact) => fact.id === id);
    if (!current || !found || (how === "withdraw" && found.withdrawn !== undefined)) return undefined;
    if (how === "erase") return { ...current, facts: current.facts.filter((fact) => fact.id !== id) };
    const when = new Date().toISOString();
    return { ...current, facts: current.facts.map((fact) => (fact.id === id ? { ...fact, until: fact.until ?? when, withdrawn: when } : fact)) };
  });
  return found;
}
