/* Where a recalled item is, and what every ranking keys and orders items by. */

/** Where a recalled item is: its session, its position there, and when it was indexed. */
export interface RecallPlace {
  session: string;
  position: number;
  at: number;
}

/** A message's key in one scope's maps: its session and position (an encoded session key holds no NUL). */
export const placeId = (session: string, position: number): string => `${session}\u0000${position}`;

/**
 * How equal scores are ordered: by session, then position, highest first, as the SQL
 * index's statements order them, so every index gives one answer whatever order its
 * items came in.
 */
export function tieOrder(a: RecallPlace, b: RecallPlace): number {
  return a.session === b.session ? b.position - a.position : a.session < b.session ? 1 : -1;
}
