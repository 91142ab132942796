import { loadavg } from "node:os";
import type { Wave2Result } from "../lib/results.js";
import type { LocalRequestCost } from "./request-cost.js";
import type { StormResult, WorkersScalingResult } from "./result.js";
import { FAIRNESS_TARGET, type FairnessResult } from "./scenarios/fairness.js";
import type { UpdateStreamResult } from "./scenarios/update-stream.js";
import type { StreamsAndCommands } from "./streams.js";
import {
  FANOUT_CPU_TARGET_MICROS,
  type LocalTargets,
  WORKERS_TARGET,
  WS_TARGET,
  webSocketMet,
} from "./targets.js";

/** A finished comparison, as the summary prints it. */
export interface LocalRun {
  batch: number;
  loadAtStart: number[];
  streams: StreamsAndCommands;
  requestCost?: LocalRequestCost | undefined;
  wave2?: Wave2Result | undefined;
  fairness?: FairnessResult | undefined;
  workersScaling?: WorkersScalingResult | undefined;
  storm?: StormResult | undefined;
  targets: LocalTargets;
}

const verdict = (met: boolean | undefined) => (met === undefined ? "not run" : met ? "met" : "NOT met");

/** The comparison's tables and targets' verdicts on stdout, scenario by scenario. */
export function printSummary(run: LocalRun): void {
  const { updates, batched, commands } = run.streams;
  if (updates && batched) {
    const row = (u: UpdateStreamResult) => ({
      "direct gRPC": u.eventsPerSecond.directGrpc,
      "gateway WebSocket": u.eventsPerSecond.gatewayWebSocket,
      "gateway HTTP list": u.eventsPerSecond.gatewayHttpList,
      "WS vs direct": u.ratioToDirect.gatewayWebSocket,
      "list vs direct": u.ratioToDirect.gatewayHttpList,
    });
    console.table({ "1 event/tx": row(updates), [`${run.batch} events/tx`]: row(batched) });
    console.log(
      `gateway RSS: ${(updates.gatewayFirstWebSocketRssBytes / 2 ** 20).toFixed(0)} MiB streaming on a fresh gateway, ` +
        `${(updates.gatewayPeakRssBytes / 2 ** 20).toFixed(0)} MiB peak after whole-range list answers; ` +
        `WebSocket target >= ${WS_TARGET}: ${webSocketMet(updates) ? "met" : "NOT met"} (1/tx), ` +
        `${webSocketMet(batched) ? "met" : "NOT met"} (${run.batch}/tx)`,
    );
  }
  if (commands) console.table({ "direct gRPC": commands.directGrpc, gateway: commands.gateway });
  if (run.requestCost) printRequestCost(run.requestCost, run);
  const fanout = run.wave2?.fanout;
  if (fanout) {
    console.table(
      Object.fromEntries(
        fanout.points.map((p) => [
          `N=${p.subscribers}`,
          {
            "elements each": p.elementsPerSubscriber,
            "deliveries/s": p.deliveriesPerSecond,
            "gateway CPU µs/delivery": p.gatewayCpuMicrosPerDelivery,
            "upstream streams": p.upstreamStreams,
            handovers: p.handovers,
            "admission probes": p.admissionProbes,
            "GetUpdates calls": p.getUpdatesCalls,
          },
        ]),
      ),
    );
  }
  if (run.wave2) {
    const t = run.targets;
    console.log(
      `targets: gateway CPU per delivery at N=100 <= ${FANOUT_CPU_TARGET_MICROS} µs: ${verdict(t.cpuPerDeliveryAt100?.met)} ` +
        `(${t.cpuPerDeliveryAt100?.micros ?? "-"}); one upstream call per N: ${verdict(t.oneUpstreamPerDistinctRequest?.met)} ` +
        `(${t.oneUpstreamPerDistinctRequest?.calls.join(", ") ?? "-"}); idle connection <= 16 KiB: ${verdict(t.idleConnectionRss?.met)} ` +
        `(${t.idleConnectionRss?.bytes ?? "-"} B); 2 workers >= ${WORKERS_TARGET}x one: ${verdict(t.twoWorkersVsOne?.met)} ` +
        `(${t.twoWorkersVsOne?.ratio ?? "-"}x)`,
    );
  }
  if (run.fairness) printFairness(run.fairness);
  if (run.storm) printStorm(run.storm);
  if (run.workersScaling) printWorkersScaling(run.workersScaling);
}

function printWorkersScaling(scaling: WorkersScalingResult): void {
  for (const [load, measured] of Object.entries(scaling.results)) {
    if (!measured) continue;
    console.log(`workers-scaling, ${load}: ${measured.unit} per second, ${measured.concurrency} loops`);
    console.table(
      measured.points.map((p) => ({
        workers: p.workers,
        threads: p.threads,
        "per second": p.perSecond,
        "vs 1": p.ratio ?? "-",
        "gateway cores": p.cores.gateway,
        "sandbox cores": p.cores.sandbox,
        "client cores": p.cores.clients,
        "gateway CPU µs each": p.gatewayCpuMicrosPer,
        failures: p.failures,
      })),
    );
  }
  console.log(`workers-scaling cpus: ${scaling.cpus.why}`);
}

function printRequestCost(r: LocalRequestCost, run: LocalRun): void {
  const stream = (u: UpdateStreamResult) => ({
    "WS µs/element": u.gatewayCost?.cpuMicrosPerElement.webSocket,
    "list µs/element": u.gatewayCost?.cpuMicrosPerElement.httpList,
    "NDJSON µs/element": u.gatewayCost?.cpuMicrosPerElement.ndjson,
    "WS vs direct": u.ratioToDirect.gatewayWebSocket,
    "list vs direct": u.ratioToDirect.gatewayHttpList,
    "NDJSON vs direct": u.ratioToDirect.gatewayNdjson,
    "NDJSON first ms": u.ndjsonFirstElementMs,
  });
  console.table({
    "submit-and-wait": {
      "gateway CPU ms/request": r.submitAndWait.gatewayCpuMsPerCommand,
      "vs direct": r.submitAndWait.ratioToDirect.throughput,
    },
    "submit-and-wait-for-transaction": {
      "gateway CPU ms/request": r.submitAndWaitForTransaction.gatewayCpuMsPerRequest,
    },
    "GET /v2/state/ledger-end": { "gateway CPU ms/request": r.ledgerEnd.gatewayCpuMsPerRequest },
  });
  console.table({
    "1 event/tx": stream(r.updateStream),
    [`${run.batch} events/tx`]: stream(r.updateStreamBatched),
  });
  console.log(
    `request-cost targets: ${Object.entries(r.targets)
      .map(([name, t]) => `${name} ${verdict(t.met)}`)
      .join(", ")}; load average ${run.loadAtStart.join(" ")} -> ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
}

function printFairness(fairness: FairnessResult): void {
  console.table(
    Object.fromEntries(
      fairness.runs.flatMap((run) =>
        run.windows.map((w, i) => [
          `caps ${run.caps}, ${i + 1}. ${w.load}`,
          {
            "B commands/s": w.victim.commandsPerSecond,
            "B p50 ms": w.victim.p50Ms,
            "B p99 ms": w.victim.p99Ms,
            "B deliveries/s": w.victim.deliveriesPerSecond,
            "A 200": w.flood?.submitAnswers["200"] ?? "-",
            "A 429": w.flood?.submitAnswers["429"] ?? "-",
            "A WS 1013": w.flood?.webSockets.closes["1013"] ?? "-",
            "CPU s gw/sb/B/A": `${w.cpuSeconds.gateway}/${w.cpuSeconds.sandbox}/${w.cpuSeconds.victim}/${w.cpuSeconds.flood ?? "-"}`,
          },
        ]),
      ),
    ),
  );
  for (const run of fairness.runs)
    console.log(
      `fairness, caps ${run.caps}: flooded / unloaded (medians) p99 ${run.ratios.p99}x, deliveries/s ${run.ratios.deliveriesPerSecond}x ` +
        `(target: p99 <= ${1 + FAIRNESS_TARGET}x, deliveries >= ${1 - FAIRNESS_TARGET}x): ${verdict(run.met)}`,
    );
}

function printStorm(storm: StormResult): void {
  console.table(
    Object.fromEntries(
      storm.points.map((p) => [
        `N=${p.subscribers} K=${p.tokens} Q=${p.queries} ${p.round ?? "cold"}`,
        {
          "CPU µs/start": p.gatewayCpuMicrosPerStart,
          "bare uWS µs/start": p.bare?.cpuMicrosPerStart ?? "",
          "x bare": p.timesBare ?? "",
          "ledger calls/start": p.ledgerCallsPerStart,
          "sandbox cores (before)": p.ledgerCores ? `${p.ledgerCores.during} (${p.ledgerCores.before})` : "",
          "all first (s)": p.firstAllSeconds,
          failed: p.failed,
          "503s": p.refused,
          "established p50/p99 ms": `${p.established.during.p50}/${p.established.during.p99}`,
          "before p50/p99 ms": `${p.established.before.p50}/${p.established.before.p99}`,
          "loop lag max ms": p.gatewayLoopLagMaxMs ?? "",
        },
      ]),
    ),
  );
}
