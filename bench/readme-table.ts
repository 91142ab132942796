/**
 * `make bench-readme`: renders the README's bench table from the newest committed result file
 * in bench/results (between `<!-- bench:gateway -->` and `<!-- /bench:gateway -->`).
 * test/bench/readme-table.test.ts fails when the README is not what this renders.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectRoot } from "../src/proto/project-root.js";
import { type GatewayResultFile, latestCommittedResult } from "./lib/results.js";

export const BLOCK_START = "<!-- bench:gateway -->";
export const BLOCK_END = "<!-- /bench:gateway -->";

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

/** The README with its bench block rendered from the newest committed result. */
export function readmeWithTable(root: string, readme: string): string {
  const start = readme.indexOf(BLOCK_START);
  const end = readme.indexOf(BLOCK_END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${BLOCK_START} ... ${BLOCK_END} block`);
  return (
    readme.slice(0, start) +
    renderTable(root, latestCommittedResult(root)) +
    readme.slice(end + BLOCK_END.length)
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = projectRoot();
  const path = join(root, "README.md");
  writeFileSync(path, readmeWithTable(root, readFileSync(path, "utf8")));
  process.stdout.write(`README.md: bench table from ${latestCommittedResult(root).path}\n`);
}
