import { readFileSync } from "node:fs";
import type { GatewayResult } from "../lib/results.js";
import { compareLocalRuns } from "../rig/compare.js";
import { type LoadResult, TOOL_NAMES } from "./load-result.js";
import { type RegressionLimit, regressionVerdicts } from "./regression-gate.js";
import { sideBySide } from "./side-by-side.js";

type AnyResult = { kind: "load"; result: LoadResult } | { kind: "local"; result: GatewayResult };

/**
 * Reads a results file of the load tool: a load run's, or a comparison's (`local`, and the
 * `gateway-*.json` that bench/rig/run.ts wrote before it: those have no `tool`, but their targets),
 * or says why it is neither.
 */
export function readResult(path: string): AnyResult {
  let parsed: { tool?: unknown; targets?: unknown; date?: unknown };
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  if ((TOOL_NAMES as readonly unknown[]).includes(parsed.tool))
    return { kind: "load", result: parsed as LoadResult };
  if (typeof parsed.targets === "object" && typeof parsed.date === "string")
    return { kind: "local", result: parsed as GatewayResult };
  throw new Error(`${path} is not a results file of the load tool`);
}

/**
 * `--compare A.json B.json`: two load runs, or two comparisons (`local`), side by side; with
 * `--max-regression` limits (load runs only), B judged against A: `passed` false past one.
 */
export function compareFiles(
  pathA: string,
  pathB: string,
  limits: readonly RegressionLimit[] = [],
): { text: string; passed: boolean } {
  const a = readResult(pathA);
  const b = readResult(pathB);
  if (a.kind === "load" && b.kind === "load") {
    const verdicts = regressionVerdicts(a.result, b.result, limits);
    const text = compareRuns(pathA, a.result, pathB, b.result);
    return {
      text: `${text}${verdicts.map((v) => `${v.line}\n`).join("")}`,
      passed: verdicts.every((v) => v.passed),
    };
  }
  if (limits.length > 0) throw new Error("--max-regression reads load runs, not comparisons (local)");
  if (a.kind === "local" && b.kind === "local")
    return { text: compareLocalRuns(pathA, a.result, pathB, b.result), passed: true };
  throw new Error(
    `${pathA} is ${a.kind === "load" ? "a load run" : "a comparison (local)"}, ${pathB} ${b.kind === "load" ? "a load run" : "a comparison (local)"}: their figures are not the same`,
  );
}

const METRICS = [
  ["per second", (s: LoadResult["scenarios"][string]) => s.ratePerSecond],
  ["p50 ms", (s: LoadResult["scenarios"][string]) => s.latencyMs.p50],
  ["p95 ms", (s: LoadResult["scenarios"][string]) => s.latencyMs.p95],
  ["p99 ms", (s: LoadResult["scenarios"][string]) => s.latencyMs.p99],
  ["p99.9 ms", (s: LoadResult["scenarios"][string]) => s.latencyMs["p99.9"]],
  ["max ms", (s: LoadResult["scenarios"][string]) => s.latencyMs.max],
  ["errors", (s: LoadResult["scenarios"][string]) => s.errors],
] as const;

/**
 * Two runs side by side: per series and figure, A, B and B/A; each run's target and load first,
 * with the sandbox caveat where a run has it.
 */
function compareRuns(pathA: string, a: LoadResult, pathB: string, b: LoadResult): string {
  const lines = [
    `A: ${pathA}: ${a.target.url}, ${a.load.description}${a.target.caveat ? ` (${a.target.caveat})` : ""}`,
    `B: ${pathB}: ${b.target.url}, ${b.load.description}${b.target.caveat ? ` (${b.target.caveat})` : ""}`,
  ];
  const names = [...new Set([...Object.keys(a.scenarios), ...Object.keys(b.scenarios)])];
  lines.push(
    ...sideBySide(
      ["series", "figure"],
      names.flatMap((name) =>
        METRICS.map(([label, read]) => {
          const sa = a.scenarios[name];
          const sb = b.scenarios[name];
          return {
            labels: [name, label] as [string, string],
            a: sa ? read(sa) : undefined,
            b: sb ? read(sb) : undefined,
          };
        }),
      ),
    ),
  );
  return `${lines.join("\n")}\n`;
}
