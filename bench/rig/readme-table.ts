/**
 * `make bench-readme`: renders the bench blocks of the performance guide (docs/performance.md,
 * once the README's Performance section) from the newest committed result files in
 * bench/results: the update stream and submit-and-wait table (between `<!-- bench:gateway -->`
 * and `<!-- /bench:gateway -->`) from the newest with those scenarios, and the fan-out, idle
 * connections and workers figures with their SVG charts (`<!-- bench:wave2 -->` ...) from the
 * newest with any of them. The files are `make bench`'s (`load.js local`), and bench/rig/run.ts's
 * before it, in the same shape: both render alike.
 * test/bench/rig/readme-table.test.ts fails when the guide is not what this renders.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { projectRoot } from "../../src/proto/project-root.js";
import {
  type GatewayResult,
  type GatewayResultFile,
  latestCommittedResult,
  type StoredFanoutPoint,
} from "../lib/results.js";
import type { WorkersPoint as StoredWorkersPoint } from "./scenarios/fanout.js";

/** The guide that holds the bench blocks, relative to the repository root. */
export const PERFORMANCE_GUIDE = "docs/performance.md";

export const BLOCK_START = "<!-- bench:gateway -->";
export const BLOCK_END = "<!-- /bench:gateway -->";
export const WAVE2_START = "<!-- bench:wave2 -->";
export const WAVE2_END = "<!-- /bench:wave2 -->";

const hasV1 = (r: GatewayResult) =>
  r.updateStream !== undefined && r.updateStreamBatched !== undefined && r.submitAndWait !== undefined;
const hasWave2 = (r: GatewayResult) =>
  r.fanout !== undefined || r.idleConnections !== undefined || r.workers !== undefined;

const int = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
const ratio = (n: number) => n.toFixed(2);
const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

/** The commit a result names, else the commit its file was last committed in (older results). */
function commitOf(root: string, file: GatewayResultFile): string {
  const { commit } = file.result;
  if (commit) return `${commit.id.slice(0, 7)}${commit.dirty ? " (with uncommitted changes)" : ""}`;
  try {
    const added = execFileSync("git", ["log", "--format=%h", "-1", "--", file.path], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return added === "" ? "unknown" : `${added} (the file's commit)`;
  } catch {
    return "unknown";
  }
}

export function renderTable(root: string, file: GatewayResultFile): string {
  const r = file.result;
  if (!r.updateStream || !r.updateStreamBatched || !r.submitAndWait || !r.targets.webSocketVsDirect)
    throw new Error(`${file.path} has no update-stream and submit-and-wait results`);
  const single = r.updateStream;
  const batched = r.updateStreamBatched;
  const row = (label: string, u: typeof single) =>
    `| ${label} | ${int(u.eventsPerSecond.directGrpc)} | ${int(u.eventsPerSecond.gatewayWebSocket)} ` +
    `(**${ratio(u.ratioToDirect.gatewayWebSocket)}** of direct) | ${int(u.eventsPerSecond.gatewayHttpList)} ` +
    `(${ratio(u.ratioToDirect.gatewayHttpList)}) |`;
  const s = r.submitAndWait;
  const target = r.targets.webSocketVsDirect;
  const machine = r.machine
    ? `${r.machine.cpus}, ${r.machine.memoryGiB} GiB, ${r.machine.os}, Node ${r.machine.node}`
    : `${r.cpus}, Node ${r.node}`;
  const date = r.date.replace("T", " ").replace(/:\d\d\.\d+Z$/, " UTC");
  return [
    BLOCK_START,
    "| update stream, events/s | direct gRPC | gateway WebSocket | gateway HTTP list twin |",
    "|---|---|---|---|",
    row(`${single.eventsPerTransaction} event per transaction`, single),
    row(`${batched.eventsPerTransaction} events per transaction`, batched),
    "",
    `| submit-and-wait, concurrency ${s.concurrency} | commands/s | p50 | p99 |`,
    "|---|---|---|---|",
    `| direct gRPC | ${int(s.directGrpc.commandsPerSecond)} | ${s.directGrpc.p50Ms} ms | ${s.directGrpc.p99Ms} ms |`,
    `| gateway (JSON) | ${int(s.gateway.commandsPerSecond)} (${ratio(s.ratioToDirect.throughput)} of direct) | ` +
      `${s.gateway.p50Ms} ms | ${s.gateway.p99Ms} ms |`,
    "",
    `Target: the WebSocket delivers at least ${Math.round(target.min * 100)}% of the direct gRPC rate: ` +
      `**${target.met && target.metBatched ? "met" : "not met"}**`,
    `(${ratio(single.ratioToDirect.gatewayWebSocket)} with one event per transaction, ` +
      `${ratio(batched.ratioToDirect.gatewayWebSocket)} with ${batched.eventsPerTransaction}).`,
    `Gateway memory: ${mib(single.gatewayFirstWebSocketRssBytes)} resident while a fresh gateway streams the`,
    `${int(single.events)} events over the WebSocket (the stream is paused, not buffered, when the client lags);`,
    `${mib(single.gatewayPeakRssBytes)} peak later in the run, after list-twin answers that hold all ${int(single.events)} elements at once`,
    "(the bench raises the list limit to the whole range; the default limit is 1024).",
    `Run of ${date} on ${machine}, commit ${commitOf(root, file)}:`,
    `\`${r.command}\` (\`make bench\` runs it with these defaults); results in \`${file.path}\`.`,
    BLOCK_END,
  ].join("\n");
}

const machineOf = (r: GatewayResult) =>
  r.machine
    ? `${r.machine.cpus}, ${r.machine.memoryGiB} GiB, ${r.machine.os}, Node ${r.machine.node}`
    : `${r.cpus}, Node ${r.node}`;
const met = (target: { met: boolean } | undefined) =>
  target === undefined ? "not run" : target.met ? "met" : "not met";

/**
 * The charts a run wrote beside its results file and git tracks, by name (outside a git
 * checkout, a source archive, every file there counts, as in latestCommittedResult).
 */
function committedCharts(root: string, file: GatewayResultFile): Set<string> {
  const base = file.path.replace(/\.json$/, "-");
  let tracked: string[];
  try {
    tracked = execFileSync("git", ["ls-files", "bench/results"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).split("\n");
  } catch {
    tracked = readdirSync(join(root, "bench", "results")).map((name) => `bench/results/${name}`);
  }
  return new Set(
    tracked.filter((p) => p.startsWith(base) && p.endsWith(".svg")).map((p) => p.slice(base.length, -4)),
  );
}

/** Runs before the breakdown (upstreamCalls) have no handover and probe counts. */
const streamsOf = (p: StoredFanoutPoint) => p.upstreamStreams ?? p.upstreamCalls ?? "-";

/** The fan-out, idle-connection and workers figures of bench v2, with their charts. */
export function renderWave2(root: string, file: GatewayResultFile): string {
  const r = file.result;
  const t = r.targets;
  const charts = committedCharts(root, file);
  const chart = (name: string, alt: string) =>
    charts.has(name) ? [`![${alt}](${fromGuide(file.path.replace(/\.json$/, `-${name}.svg`))})`] : [];
  const lines: string[] = [WAVE2_START];
  if (r.fanout) {
    lines.push(
      "| N identical subscribers | elements each | deliveries/s | gateway CPU per delivery | upstream streams | handovers | admission probes | GetUpdates calls |",
      "|---|---|---|---|---|---|---|---|",
      ...r.fanout.points.map(
        (p) =>
          `| ${int(p.subscribers)} | ${int(p.elementsPerSubscriber)} | ${int(p.deliveriesPerSecond)} | ` +
          `${p.gatewayCpuMicrosPerDelivery.toFixed(2)} µs | ${streamsOf(p)} | ${p.handovers ?? "-"} | ${p.admissionProbes ?? "-"} | ${p.getUpdatesCalls} |`,
      ),
      "",
      `Counted by ${r.fanout.upstreamCallsCountedBy}; one gateway worker.`,
      "",
      ...chart("fanout-deliveries", "deliveries/s by N"),
      ...chart("fanout-cpu", "gateway CPU per delivery by N"),
      ...chart("fanout-upstreams", "upstream calls by N"),
      "",
    );
  }
  if (r.idleConnections) {
    const idle = r.idleConnections;
    lines.push(
      `Idle WebSockets: ${int(idle.connections)} open (${int(idle.stillOpen)} still open when closed by the client), ` +
        `gateway RSS ${mib(idle.rssBeforeBytes)} -> ${mib(idle.rssAfterBytes)}: ` +
        `**${(idle.rssPerConnectionBytes / 1024).toFixed(1)} KiB per connection**.`,
      "",
      ...chart("idle", "RSS per idle WebSocket"),
      "",
    );
  }
  if (r.workers) {
    const streamed = r.workers.points.every((p) => p.framesPerSecond !== undefined);
    const cpu = (p: StoredWorkersPoint) =>
      `${p.gatewayCpuSeconds.toFixed(1)} s` +
      (p.sandboxCpuSeconds === undefined
        ? ""
        : ` / ${p.sandboxCpuSeconds.toFixed(1)} s / ${(p.clientCpuSeconds ?? 0).toFixed(1)} s`);
    lines.push(
      streamed
        ? "| server.workers | transactions/s | streams | CPU: gateway / sandbox / client | window |"
        : "| server.workers | requests/s | gateway CPU |",
      streamed ? "|---|---|---|---|---|" : "|---|---|---|",
      ...r.workers.points.map((p) =>
        streamed
          ? `| ${p.workers} | ${int(p.framesPerSecond ?? 0)} | ${int(p.requests)} | ${cpu(p)} | ${p.seconds.toFixed(1)} s |`
          : `| ${p.workers} | ${p.requestsPerSecond.toFixed(1)} | ${p.gatewayCpuSeconds.toFixed(1)} s in ${p.seconds.toFixed(0)} s |`,
      ),
      "",
      `${r.workers.scenario}: 2 workers give **${r.workers.ratio?.toFixed(2) ?? "?"}x** one worker.`,
      "",
      ...chart("workers", "2 workers vs 1"),
      "",
    );
  }
  lines.push(
    `Targets: gateway CPU per delivery at N = 100 <= ${t.cpuPerDeliveryAt100?.maxMicros ?? 1.5} µs: **${met(t.cpuPerDeliveryAt100)}**; ` +
      `one upstream stream for any N: **${met(t.oneUpstreamPerDistinctRequest)}**; ` +
      `idle connection <= 16 KiB: **${met(t.idleConnectionRss)}**; ` +
      `2 workers >= ${t.twoWorkersVsOne?.min ?? 1.7}x one: **${met(t.twoWorkersVsOne)}**.`,
    ...(r.note ? [`Note: ${r.note}`] : []),
    ...(r.loadAverage
      ? [
          `Machine load average (1/5/15 min): ${r.loadAverage.start.join(" / ")} at the start, ${r.loadAverage.end.join(" / ")} at the end.`,
        ]
      : []),
    `Run of ${dateOf(r)} on ${machineOf(r)}, commit ${commitOf(root, file)}:`,
    `\`${r.command}\`; results in \`${file.path}\`.`,
    WAVE2_END,
  );
  return lines.join("\n");
}

/** A repository path as the guide links it. */
const fromGuide = (path: string) => relative(dirname(PERFORMANCE_GUIDE), path);

const dateOf = (r: GatewayResult) => r.date.replace("T", " ").replace(/:\d\d\.\d+Z$/, " UTC");

function replaceBlock(guide: string, startMark: string, endMark: string, block: string): string {
  const start = guide.indexOf(startMark);
  const end = guide.indexOf(endMark);
  if (start < 0 || end < start)
    throw new Error(`${PERFORMANCE_GUIDE} has no ${startMark} ... ${endMark} block`);
  return guide.slice(0, start) + block + guide.slice(end + endMark.length);
}

/** The performance guide with its bench blocks rendered from the newest committed results. */
export function guideWithTables(root: string, guide: string): string {
  const v1 = replaceBlock(
    guide,
    BLOCK_START,
    BLOCK_END,
    renderTable(root, latestCommittedResult(root, hasV1)),
  );
  // The wave-2 block is rendered where the guide has one.
  if (!v1.includes(WAVE2_START)) return v1;
  return replaceBlock(v1, WAVE2_START, WAVE2_END, renderWave2(root, latestCommittedResult(root, hasWave2)));
}

/** The result files the guide's blocks come from. */
export function tableSources(root: string): { gateway: string; wave2: string | undefined } {
  let wave2: string | undefined;
  try {
    wave2 = latestCommittedResult(root, hasWave2).path;
  } catch {
    wave2 = undefined;
  }
  return { gateway: latestCommittedResult(root, hasV1).path, wave2 };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = projectRoot();
  const path = join(root, PERFORMANCE_GUIDE);
  writeFileSync(path, guideWithTables(root, readFileSync(path, "utf8")));
  const sources = tableSources(root);
  process.stdout.write(
    `${PERFORMANCE_GUIDE}: bench table from ${sources.gateway}${sources.wave2 ? `, fan-out/idle/workers from ${sources.wave2}` : ""}\n`,
  );
}
