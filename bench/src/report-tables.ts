/**
 * The cells of a `pnpm bench` report, read back from its Markdown: every numeric cell
 * of every table, addressed by section, row and column, with times in milliseconds so
 * cells written in different units compare.
 */
export interface ReportCell {
  /** The headings above the table, e.g. `W2: turn latency … / Default strategy (whole history)`. */
  section: string;
  /** The row's leading text cells, e.g. `postgres 1,000`. */
  row: string;
  /** The column's header, e.g. `memoria`. */
  column: string;
  /** The value: milliseconds for a time, the number itself otherwise. */
  value: number;
  /** True when the cell is a time (µs, ms, s). */
  time: boolean;
}

const TIME_UNITS: Record<string, number> = { µs: 1e-3, us: 1e-3, ms: 1, s: 1e3 };

/** A cell's number: `1,152`, `0.44`, `67.2 µs`, `2.74 ms`; undefined for text (`—`, `sqlite`). */
export function parseCell(text: string): { value: number; time: boolean } | undefined {
  const match = /^(-?[\d,]*\.?\d+)\s*(µs|us|ms|s)?$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number((match[1] as string).replaceAll(",", ""));
  if (!Number.isFinite(value)) return undefined;
  const unit = match[2];
  return unit ? { value: value * (TIME_UNITS[unit] as number), time: true } : { value, time: false };
}

const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((cell) => cell.trim());

/** Every numeric cell of every table in a report. */
export function reportCells(markdown: string): ReportCell[] {
  const cells: ReportCell[] = [];
  const headings: string[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const heading = /^(#{2,4}) (.*)$/.exec(line);
    if (heading) {
      headings.length = (heading[1] as string).length - 2;
      headings.push(heading[2] as string);
      continue;
    }
    // A table: a header line, then a line of dashes, then rows.
    if (!line.startsWith("|") || !/^\|[\s-|]+\|$/.test(lines[i + 1] ?? "")) continue;
    const header = cellsOf(line);
    for (i += 2; i < lines.length && (lines[i] as string).startsWith("|"); i++) {
      const row = cellsOf(lines[i] as string);
      // The row's key is its cells up to the first measurement (a time, or "—" where a contender has none): `postgres 1,000`.
      const found = row.findIndex((cell) => parseCell(cell)?.time === true || cell === "—");
      const keyEnd = found < 0 ? row.length : Math.max(found, 1);
      const key = row.slice(0, keyEnd).join(" ");
      for (let c = keyEnd; c < row.length; c++) {
        const parsed = parseCell(row[c] as string);
        if (parsed) cells.push({ section: headings.join(" / "), row: key, column: header[c] ?? String(c), ...parsed });
      }
    }
    i--; // the line that ended the table (a heading, perhaps) is read again
  }
  return cells;
}

export const cellId = (cell: Pick<ReportCell, "section" | "row" | "column">) => `${cell.section}\u0000${cell.row}\u0000${cell.column}`;
