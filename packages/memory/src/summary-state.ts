import type { SessionState } from "@memoria/core";

/**
 * A running summary: `folded` messages from the session's start are in it. The
 * pointer makes folding incremental and repairable: whatever was stored after a
 * crash but never folded is folded on the next turn.
 */
export interface SummaryState {
  summary: string;
  folded: number;
}

export async function readSummary(state: SessionState, name: string): Promise<SummaryState> {
  const saved = (await state.get(name)) as Partial<SummaryState> | undefined;
  return { summary: typeof saved?.summary === "string" ? saved.summary : "", folded: typeof saved?.folded === "number" ? saved.folded : 0 };
}

export function writeSummary(state: SessionState, name: string, value: SummaryState): Promise<void> {
  return state.set(name, { summary: value.summary, folded: value.folded });
}
