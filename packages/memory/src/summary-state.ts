import { MemoriaError, type MemoryLoadContext, type SessionState } from "@memoria/core";

/**
 * A running summary: `folded` messages from the session's start are in it. The
 * pointer makes folding incremental and repairable: whatever was stored after a
 * crash but never folded is folded on the next turn.
 */
export interface SummaryState {
  summary: string;
  /** Messages from the session's start folded into the summary. */
  folded: number;
  /** Messages from the session's start removed from the store (compaction); positions stay absolute. */
  trimmed: number;
}

export async function readSummary(state: SessionState, name: string): Promise<SummaryState> {
  const saved = (await state.get(name)) as Partial<SummaryState> | undefined;
  const number = (value: unknown) => (typeof value === "number" ? value : 0);
  return { summary: typeof saved?.summary === "string" ? saved.summary : "", folded: number(saved?.folded), trimmed: number(saved?.trimmed) };
}

export function writeSummary(state: SessionState, name: string, value: SummaryState): Promise<void> {
  return state.set(name, { summary: value.summary, folded: value.folded, trimmed: value.trimmed });
}

/**
 * Compaction: removes the folded messages from the store. The state is written
 * first, so a crash between the two folds a few messages twice, never loses any.
 */
export async function compact(context: MemoryLoadContext, name: string, value: SummaryState): Promise<void> {
  const drop = value.folded - value.trimmed;
  if (drop <= 0) return;
  if (!context.trim) {
    throw new MemoriaError("INVALID_ARGUMENT", "compact: true needs a store that can remove old messages (HistoryStore.trim); this one cannot.");
  }
  await writeSummary(context.state, name, { ...value, trimmed: value.folded });
  await context.trim(drop);
}
