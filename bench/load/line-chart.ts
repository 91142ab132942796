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
  /** Said under the chart (the sandbox caveat). */
  caption?: string;
}

const WIDTH = 640;
const HEIGHT = 280;
const MARGIN = { top: 36, right: 150, bottom: 40, left: 64 };
const COLORS = ["#3b6ea8", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085", "#7f8c8d"];

export function lineChartSvg(chart: LineChart): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const all = chart.series.flatMap((s) => s.points);
  const maxX = Math.max(1, ...all.map(([x]) => x));
  const maxY = Math.max(...all.map(([, y]) => y), 0) * 1.1 || 1;
  const x = (v: number) => (MARGIN.left + (v / maxX) * plotW).toFixed(1);
  const y = (v: number) => (MARGIN.top + plotH - (v / maxY) * plotH).toFixed(1);
  const parts = [
    `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<text x="${MARGIN.left}" y="20" font-size="13" font-weight="bold">${escapeXml(chart.title)}</text>`,
    `<text x="12" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 12 ${MARGIN.top + plotH / 2})">${escapeXml(chart.unit)}</text>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 6}" text-anchor="middle">seconds after the warm-up</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (maxY / 4) * i;
    parts.push(
      `<line x1="${MARGIN.left}" y1="${y(v)}" x2="${MARGIN.left + plotW}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${Number(y(v)) + 4}" text-anchor="end" fill="#555">${shortNumber(v)}</text>`,
    );
    const t = (maxX / 4) * i;
    parts.push(
      `<text x="${x(t)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle" fill="#555">${shortNumber(t)}</text>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
  );
  chart.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length];
    const points = series.points.map(([px, py]) => `${x(px)},${y(py)}`).join(" ");
    parts.push(
      `<polyline class="series" data-series="${escapeXml(series.name)}" fill="none" stroke="${color}" stroke-width="2" points="${points}"/>`,
      ...series.points.map(([px, py]) => `<circle cx="${x(px)}" cy="${y(py)}" r="2.5" fill="${color}"/>`),
      `<rect x="${WIDTH - MARGIN.right + 12}" y="${MARGIN.top + i * 18}" width="10" height="10" fill="${color}"/>`,
      `<text x="${WIDTH - MARGIN.right + 28}" y="${MARGIN.top + i * 18 + 9}">${escapeXml(series.name)}</text>`,
    );
  });
  parts.push("</svg>");
  const caption = chart.caption ? `<figcaption>${escapeXml(chart.caption)}</figcaption>` : "";
  return `<figure>${parts.join("")}${caption}</figure>`;
}
