/**
 * Bar charts as hand-written SVG, from the bench's numbers (no charting dependency): one bar
 * per label, its value written above it, an optional dashed target line.
 */
export interface BarChart {
  title: string;
  /** Axis caption: what the values are, with their unit. */
  unit: string;
  bars: readonly { label: string; value: number }[];
  target?: { value: number; label: string };
}

const WIDTH = 560;
const HEIGHT = 300;
const MARGIN = { top: 44, right: 20, bottom: 44, left: 64 };

/** Text as SVG/HTML content or attribute value. */
export const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** 1234567 -> "1.23M", 0.8123 -> "0.812": three significant digits. */
export function shortNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${(value / 1e6).toPrecision(3)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toPrecision(3)}k`;
  if (abs >= 100 || Number.isInteger(value)) return String(Math.round(value));
  return value.toPrecision(3);
}

export function barChartSvg(chart: BarChart): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const max = Math.max(...chart.bars.map((b) => b.value), chart.target?.value ?? 0) * 1.15 || 1;
  const y = (v: number) => MARGIN.top + plotH - (v / max) * plotH;
  const slot = plotW / Math.max(1, chart.bars.length);
  const barW = Math.min(80, slot * 0.6);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escapeXml(chart.title)}</text>`,
    `<text x="14" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + plotH / 2})">${escapeXml(chart.unit)}</text>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${WIDTH - MARGIN.right}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    parts.push(
      `<text x="${MARGIN.left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#555">${shortNumber(v)}</text>`,
      `<line x1="${MARGIN.left}" y1="${y(v)}" x2="${WIDTH - MARGIN.right}" y2="${y(v)}" stroke="#ddd"/>`,
    );
  }
  chart.bars.forEach((bar, i) => {
    const x = MARGIN.left + slot * i + (slot - barW) / 2;
    const top = y(bar.value);
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${barW.toFixed(1)}" height="${(MARGIN.top + plotH - top).toFixed(1)}" fill="#3b6ea8"/>`,
      `<text x="${(x + barW / 2).toFixed(1)}" y="${(top - 5).toFixed(1)}" text-anchor="middle">${shortNumber(bar.value)}</text>`,
      `<text x="${(x + barW / 2).toFixed(1)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${escapeXml(bar.label)}</text>`,
    );
  });
  if (chart.target) {
    const ty = y(chart.target.value).toFixed(1);
    parts.push(
      `<line x1="${MARGIN.left}" y1="${ty}" x2="${WIDTH - MARGIN.right}" y2="${ty}" stroke="#c0392b" stroke-dasharray="6 4"/>`,
      `<text x="${WIDTH - MARGIN.right}" y="${Number(ty) - 5}" text-anchor="end" fill="#c0392b">${escapeXml(chart.target.label)}</text>`,
    );
  }
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
