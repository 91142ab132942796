import type { GatewayResult } from "../lib/results.js";
import { SANDBOX_CAVEAT } from "../load/prepare.js";
import { sideBySide } from "../load/side-by-side.js";
import { localFigures } from "./figures.js";

const describe = (r: GatewayResult) =>
  `${r.command}, ${r.commit ? r.commit.id.slice(0, 7) + (r.commit.dirty ? "-dirty" : "") : "commit unknown"}, ${r.machine?.cpus ?? r.cpus}, ${r.date}`;

/**
 * Two comparisons (`local` results, or bench/rig/run.ts's before them) side by side: every named
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
  const names = [...new Set([...Object.keys(fa), ...Object.keys(fb)])];
  lines.push(
    ...sideBySide(
      ["figure", "unit"],
      names.map((name) => ({
        labels: [name, fa[name]?.unit ?? fb[name]?.unit ?? ""],
        a: fa[name]?.value,
        b: fb[name]?.value,
      })),
    ),
  );
  return `${lines.join("\n")}\n`;
}
