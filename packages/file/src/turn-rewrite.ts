import { open } from "node:fs/promises";
import { type TurnLine, forEachLine, isTurn, parseLine } from "./session-file.js";

/**
 * A session file's lines rewritten: of each turn, the messages `keep` returns
 * (given the session position of the turn's first message, and its messages),
 * with the running counts made right. A turn whose messages all went keeps its
 * line (and id), so a retry of it is still refused. What compaction (`trim`) and
 * edits (`replaceTail`) write back, atomically, in place of the file.
 */
export async function rewriteTurns(
  file: string,
  end: number,
  keep: (first: number, messages: unknown[]) => unknown[],
): Promise<{ lines: string[]; count: number; removed: number }> {
  const lines: string[] = [];
  let position = 0;
  let count = 0;
  let removed = 0;
  const handle = await open(file, "r");
  try {
    await forEachLine(handle, 0, end, (bytes) => {
      const line = bytes.toString("utf8");
      const record = parseLine(line, file);
      if (!isTurn(record)) return void lines.push(line);
      const kept = keep(position, record.m);
      position += record.m.length;
      count += kept.length;
      removed += record.m.length - kept.length;
      lines.push(JSON.stringify({ t: record.t, n: count, m: kept } satisfies TurnLine));
    });
  } finally {
    await handle.close();
  }
  return { lines, count, removed };
}
