import { escapeXml, shortNumber } from "../lib/svg-chart.js";

/**
 * Line charts over time as hand-written SVG (the HTML report is self-contained: no script from
 * anywhere, no charting dependency): one polyline per series, a dot per point, axes with their
 * values, a legend. `class="chart"` and `class="series"` are what the report's check (and a test
 * in a browser) finds.
 */
export interface LineChart {
  title: string;
  /** The y axis: what the values are, with their unit. */
  unit: string;
  series: readonly { name: string; points: readonly (readonly [number, number])[] }[];
}

const WIDTH = 640;
const HEIGHT = 280;
const MARGIN = { top: 36, right: 180, bottom: 40, left: 64 };
const DASHES = ["", "6 3", "2 3", "8 3 2 3"];
const COLORS = ["#3b6ea8", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085", "#7f8c8d"];

/**
 * Round ticks from 0 past `max`: about `count` steps of 1, 2, 2.5 or 5 times a power of ten
 * (0/25/50/75/100, not 0/36.1/72.2/108).
 */
export function roundTicks(max: number, count = 4): number[] {
  const top = max > 0 ? max : 1;
  const raw = top / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const ticks: number[] = [];
  // Rounded to the step's digits: 0.1 * 3 is 0.30000000000000004.
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 2);
  for (let i = 0; ticks.length === 0 || (ticks.at(-1) as number) < top - 1e-9; i++)
    ticks.push(Number((i * step).toFixed(digits)));
  return ticks;
}

/** A round tick as written: 0.25, 2.5, 40, 1.5k. */
const tickLabel = (v: number) => (Math.abs(v) >= 1e4 ? shortNumber(v) : String(v));

export function lineChartSvg(chart: LineChart): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const all = chart.series.flatMap((s) => s.points);
  const xTicks = roundTicks(Math.max(0, ...all.map(([x]) => x)));
  const yTicks = roundTicks(Math.max(0, ...all.map(([, y]) => y)));
  const maxX = xTicks.at(-1) as number;
  const maxY = yTicks.at(-1) as number;
  const x = (v: number) => (MARGIN.left + (v / maxX) * plotW).toFixed(1);
  const y = (v: number) => (MARGIN.top + plotH - (v / maxY) * plotH).toFixed(1);
  const parts = [
    `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<text x="${MARGIN.left}" y="20" font-size="13" font-weight="bold">${escapeXml(chart.title)}</text>`,
    `<text x="12" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 12 ${MARGIN.top + plotH / 2})">${escapeXml(chart.unit)}</text>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle">seconds after the warm-up</text>`,
  ];
  for (const v of yTicks)
    parts.push(
      `<line x1="${MARGIN.left}" y1="${y(v)}" x2="${MARGIN.left + plotW}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${Number(y(v)) + 4}" text-anchor="end" fill="#555">${tickLabel(v)}</text>`,
    );
  for (const t of xTicks)
    parts.push(
      `<text x="${x(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" fill="#555">${tickLabel(t)}</text>`,
    );
  parts.push(
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
  );
  chart.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length];
    // Lines of equal values (p99 and p99.9 of a quiet interval) would hide each other: dashes differ.
    const dash = DASHES[i % DASHES.length];
    const points = series.points.map(([px, py]) => `${x(px)},${y(py)}`).join(" ");
    parts.push(
      `<polyline class="series" data-series="${escapeXml(series.name)}" fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""} points="${points}"/>`,
      ...series.points.map(([px, py]) => `<circle cx="${x(px)}" cy="${y(py)}" r="2.5" fill="${color}"/>`),
      // The legend draws each line as it is drawn: its colour and its dashes.
      `<line x1="${WIDTH - MARGIN.right + 10}" y1="${MARGIN.top + i * 18 + 5}" x2="${WIDTH - MARGIN.right + 30}" y2="${MARGIN.top + i * 18 + 5}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`,
      `<text x="${WIDTH - MARGIN.right + 34}" y="${MARGIN.top + i * 18 + 9}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push("</svg>");
  return `<figure>${parts.join("")}</figure>`;
}
