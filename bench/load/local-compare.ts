import type { GatewayResult } from "../lib/results.js";
import { localFigures } from "./local-figures.js";
import { SANDBOX_CAVEAT } from "./prepare.js";

const describe = (r: GatewayResult) =>
  `${r.command}, ${r.commit ? r.commit.id.slice(0, 7) + (r.commit.dirty ? "-dirty" : "") : "commit unknown"}, ${r.machine?.cpus ?? r.cpus}, ${r.date}`;

/**
 * Two comparisons (`local` results, or bench/run.ts's before them) side by side: every named
 * figure either has (local-figures.ts), A, B and B/A; what each ran, on what, at which commit,
 * first. Both are against the embedded sandbox: the caveat is said once, above the table.
 */
export function compareLocalRuns(pathA: string, a: GatewayResult, pathB: string, b: GatewayResult): string {
  const fa = localFigures(a);
  const fb = localFigures(b);
  const lines = [
    `A: ${pathA}: ${describe(a)}`,
    `B: ${pathB}: ${describe(b)}`,
    `both ${a.caveat ?? b.caveat ?? SANDBOX_CAVEAT}`,
  ];
  const rows: string[][] = [["figure", "unit", "A", "B", "B/A"]];
  for (const name of [...new Set([...Object.keys(fa), ...Object.keys(fb)])]) {
    const va = fa[name]?.value;
    const vb = fb[name]?.value;
    const ratio = va !== undefined && vb !== undefined && va !== 0 ? (vb / va).toFixed(2) : "-";
    rows.push([
      name,
      fa[name]?.unit ?? fb[name]?.unit ?? "",
      va === undefined ? "-" : String(va),
      vb === undefined ? "-" : String(vb),
      ratio,
    ]);
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length))) ?? [];
  for (const row of rows)
    lines.push(
      row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  "),
    );
  return `${lines.join("\n")}\n`;
}
