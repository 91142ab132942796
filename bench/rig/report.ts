import { escapeXml } from "../lib/svg-chart.js";
import { localFigures } from "./figures.js";
import type { LocalResult } from "./result.js";

/**
 * The comparison as one self-contained HTML page (inline SVG, nothing fetched), as the load
 * tool's report is for a load run: what ran where, every named figure (what `--threshold` and
 * `--compare` read), the targets' verdicts, the thresholds' and the bench v2 charts. Every figure
 * is against the embedded sandbox, and the page says so beside them.
 */
export function localReport(result: LocalResult, charts: [name: string, svg: string][]): string {
  const caveat = result.caveat ?? "";
  const figures = Object.entries(localFigures(result)).map(
    ([name, f]) =>
      `<tr><td>${escapeXml(name)}</td><td>${f.value}</td><td>${escapeXml(f.unit)}</td><td class="caveat">${escapeXml(caveat)}</td></tr>`,
  );
  const targets = Object.entries(result.targets).map(
    ([name, t]) =>
      `<tr><td>${escapeXml(name)}</td><td><code>${escapeXml(JSON.stringify({ ...t, met: undefined }))}</code></td><td class="${t.met ? "pass" : "fail"}">${t.met ? "met" : "not met"}</td></tr>`,
  );
  for (const [name, t] of Object.entries(result.requestCost?.targets ?? {}))
    targets.push(
      `<tr><td>request-cost ${escapeXml(name)}</td><td><code>${escapeXml(JSON.stringify({ ...t, met: undefined }))}</code></td><td class="${t.met ? "pass" : "fail"}">${t.met ? "met" : "not met"}</td></tr>`,
    );
  const verdicts = (result.thresholds ?? []).map(
    (v) =>
      `<tr><td>${escapeXml(v.threshold)}</td><td>${Number.isNaN(v.actual) ? "no such figure" : v.actual}</td><td class="${v.passed ? "pass" : "fail"}">${v.passed ? "passed" : "BREACHED"}</td></tr>`,
  );
  const m = result.machine;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Gateway vs direct gRPC ${escapeXml(result.date)}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; } td, th { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
td:first-child, th:first-child, td code { text-align: left; } .caveat { color: #a04000; text-align: left; }
.banner { background: #fff3e0; border: 1px solid #e0a060; padding: 0.6em 1em; } .pass { color: #27ae60; } .fail { color: #c0392b; font-weight: bold; }
figure { display: inline-block; margin: 0.5em; }
</style></head>
<body>
<h1>The gateway against direct gRPC</h1>
${caveat ? `<p class="banner"><strong>Every figure here is ${escapeXml(caveat)}.</strong> The sandbox, the gateways and the clients were started by the bench on this machine; the figures are ratios and costs of the gateway, not what a deployment holds.</p>` : ""}
<p>Run of ${escapeXml(result.date)} on ${escapeXml(m ? `${m.cpus}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}` : `${result.cpus}, Node ${result.node}`)}, commit ${escapeXml(result.commit ? `${result.commit.id.slice(0, 7)}${result.commit.dirty ? " (with uncommitted changes)" : ""}` : "unknown")}.
${result.loadAverage ? `Machine load average (1/5/15 min): ${result.loadAverage.start.join(" / ")} at the start, ${result.loadAverage.end.join(" / ")} at the end.` : ""}</p>
${result.note ? `<p>Note: ${escapeXml(result.note)}</p>` : ""}
<p><code>${escapeXml(result.command)}</code></p>
${verdicts.length ? `<h2>Thresholds</h2><table><tr><th>threshold</th><th>measured</th><th>verdict</th></tr>${verdicts.join("\n")}</table>` : ""}
<h2>Targets</h2>
<table><tr><th>target</th><th>figures</th><th>verdict</th></tr>
${targets.join("\n")}
</table>
<h2>Figures</h2>
<table><tr><th>figure (what --threshold and --compare read)</th><th>value</th><th>unit</th><th></th></tr>
${figures.join("\n")}
</table>
${charts.length ? `<h2>Charts</h2>\n${charts.map(([name, svg]) => `<figure id="${escapeXml(name)}">${svg}</figure>`).join("\n")}` : ""}
</body></html>
`;
}
