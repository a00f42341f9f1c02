import type { LengthPoint, RowKind } from "./latency.js";

const COLORS: Record<string, string> = {
  "in-memory": "#4c78a8",
  sqlite: "#54a24b",
  postgres: "#e45756",
  redis: "#b279a2",
  file: "#f58518",
  mongodb: "#72b7b2",
};

interface Series {
  label: string;
  color: string;
  dashed: boolean;
  points: [number, number][];
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c] as string);
}

/** One log-log panel: a ratio against session length, with a line at 1. */
function panel(title: string, series: Series[], x0: number, width: number, height: number): string {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return "";
  const xs = all.map(([x]) => Math.log10(x));
  const ys = all.map(([, y]) => Math.log10(Math.max(y, 1e-3)));
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const [yMin, yMax] = [Math.floor(Math.min(...ys)), Math.ceil(Math.max(...ys))];
  const left = x0 + 60;
  const top = 40;
  const plotW = width - 80;
  const plotH = height - 160;
  const px = (x: number) => left + ((Math.log10(x) - xMin) / (xMax - xMin || 1)) * plotW;
  const py = (y: number) => top + plotH - ((Math.log10(Math.max(y, 1e-3)) - yMin) / (yMax - yMin || 1)) * plotH;
  const parts = [`<text x="${left + plotW / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`];
  for (let e = yMin; e <= yMax; e++) {
    const y = top + plotH - ((e - yMin) / (yMax - yMin || 1)) * plotH;
    const label = 10 ** e >= 1 ? `${10 ** e}×` : `${+(10 ** e).toPrecision(1)}×`;
    const stroke = e === 0 ? "#888" : "#ddd";
    parts.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${y}" y2="${y}" stroke="${stroke}"/><text x="${left - 6}" y="${y + 4}" text-anchor="end" font-size="11">${label}</text>`,
    );
  }
  for (const size of [...new Set(all.map(([x]) => x))]) {
    const x = px(size);
    parts.push(
      `<line x1="${x}" x2="${x}" y1="${top}" y2="${top + plotH}" stroke="#eee"/><text x="${x}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${size.toLocaleString("en")}</text>`,
    );
  }
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 34}" text-anchor="middle" font-size="12">messages in the session (log scale)</text>`);
  series.forEach((s, i) => {
    const path = s.points.map(([x, y], j) => `${j === 0 ? "M" : "L"}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ");
    parts.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="7,5"' : ""}/>`);
    for (const [x, y] of s.points) parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${s.color}"/>`);
    const lx = left + (i % 2) * (plotW / 2);
    const ly = top + plotH + 52 + Math.floor(i / 2) * 16;
    parts.push(
      `<line x1="${lx}" x2="${lx + 22}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2.5"${s.dashed ? ' stroke-dasharray="7,5"' : ""}/><text x="${lx + 28}" y="${ly}" font-size="11">${escapeXml(s.label)}</text>`,
    );
  });
  return parts.join("\n");
}

/** Per store: memoria ÷ LangChain (solid) and memoria ÷ the bare engine (dashed) for one kind of row. */
function ratioSeries(points: LengthPoint[], row: RowKind): Series[] {
  const stores = [...new Set(points.map((p) => p.store))];
  return stores.flatMap((store) => {
    const rows = points.filter((p) => p.store === store && p.row === row).sort((a, b) => a.size - b.size);
    const color = COLORS[store] ?? "#333";
    const out: Series[] = [];
    const vsLangChain = rows.filter((p) => p.langchain !== undefined).map((p): [number, number] => [p.size, p.memoria / (p.langchain as number)]);
    const vsCeiling = rows.filter((p) => p.ceiling !== undefined).map((p): [number, number] => [p.size, p.memoria / (p.ceiling as number)]);
    if (vsLangChain.length) out.push({ label: `${store} ÷ LangChain`, color, dashed: false, points: vsLangChain });
    if (vsCeiling.length) out.push({ label: `${store} ÷ ceiling`, color, dashed: true, points: vsCeiling });
    return out;
  });
}

/** Two panels: memoria's default-path turn (W2) and whole-history read (W3), as ratios to LangChain and to the bare engine. */
export function latencyChart(points: LengthPoint[]): string {
  const width = 560;
  const height = 520;
  const body = [
    panel("Turn, default strategy (W2): memoria ÷ other", ratioSeries(points, "turn, whole history"), 0, width, height),
    panel("Read the whole history (W3): memoria ÷ other", ratioSeries(points, "read, whole history"), width, width, height),
  ];
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width * 2}" height="${height}" font-family="sans-serif" viewBox="0 0 ${width * 2} ${height}">
<rect width="100%" height="100%" fill="white"/>
${body.join("\n")}
</svg>
`;
}

/** A Markdown table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
