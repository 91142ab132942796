import { type LocalBench, withGateway, withSandbox } from "./ledger.js";
import {
  ledgerEndCost,
  type RequestCostResult,
  submitAndWaitForTransactionCost,
} from "./scenarios/request-cost.js";
import type { GatewayProcess } from "./scenarios/update-stream.js";
import { streamOf, submitAndWaitOn } from "./streams.js";

const CPU_PER_SUBMIT_TARGET_MS = 0.4;
const CPU_PER_GET_TARGET_MS = 0.1;
const SUBMIT_TARGET = 0.9;
const COST_WS_TARGET = 0.95;
const LIST_TARGET = 0.8;
const NDJSON_TARGET = 0.9;
const NDJSON_FIRST_ELEMENT_TARGET_MS = 100;
const LIST_RSS_TARGET = 2;

const round2 = (value: number) => Math.round(value * 100) / 100;

/** A target that every one of `ratios` must reach (1 and `--batch` events per transaction). */
function ratiosAtLeast(min: number, ratios: number[]): { min: number; ratios: number[]; met: boolean } {
  return { min, ratios, met: ratios.every((ratio) => ratio >= min) };
}

/**
 * request-cost: the gateway's CPU per request and per streamed element, with its throughput
 * ratios and their targets; each measured kind has a gateway of its own
 * (bench/rig/scenarios/request-cost.ts says why).
 */
export async function requestCost(bench: LocalBench) {
  const { ticks, batch, commands, concurrency, warmUp } = bench.options;
  const log = bench.progress("plan");
  const single = await withSandbox(bench, 1, async (ledger) => {
    log(`request cost: update streams of ${ticks} ticks, 1 per transaction ...`);
    const stream = await streamOf(bench, "request cost stream 1/tx", ledger, true);
    log(`request cost: ${commands} commands of each kind at concurrency ${concurrency} after ${warmUp} ...`);
    const submit = await submitAndWaitOn(bench, "request cost submit-and-wait", ledger, true);
    const unary = (gateway: GatewayProcess) => ({
      gatewayPort: gateway.port,
      gatewayPid: gateway.pid,
      party: ledger.sandbox.tickParty,
      token: ledger.token,
      requests: commands,
      concurrency,
      warmUp,
      progress: bench.progress("request cost"),
    });
    const forTransaction = await withGateway(bench, ledger, (gateway) =>
      submitAndWaitForTransactionCost(unary(gateway)),
    );
    const ledgerEnd = await withGateway(bench, ledger, (gateway) => ledgerEndCost(unary(gateway)));
    return { stream, submit, forTransaction, ledgerEnd };
  });
  log(`request cost: update streams of ${ticks} ticks, ${batch} per transaction ...`);
  const batchedStream = await withSandbox(bench, batch, (ledger) =>
    streamOf(bench, `request cost stream ${batch}/tx`, ledger, true),
  );
  const list = single.stream.gatewayCost;
  const listRssRatio = list
    ? round2((list.listPeakRssBytes - list.listRssBeforeBytes) / list.listAnswerBytes)
    : undefined;
  const submitCpu = single.submit.gatewayCpuMsPerCommand ?? Number.NaN;
  const figures: RequestCostResult = {
    submitAndWait: single.submit,
    submitAndWaitForTransaction: single.forTransaction,
    ledgerEnd: single.ledgerEnd,
    updateStream: { eventsPerTransaction: 1, ...single.stream },
    updateStreamBatched: { eventsPerTransaction: batch, ...batchedStream },
    gateways:
      "one per measured kind: WebSocket and list twin (per sandbox), submit-and-wait, " +
      `submit-and-wait-for-transaction, ledger-end; ${warmUp} requests or one read before each window`,
  };
  return {
    ...figures,
    targets: {
      cpuPerSubmitAndWait: {
        maxMs: CPU_PER_SUBMIT_TARGET_MS,
        ms: submitCpu,
        met: submitCpu <= CPU_PER_SUBMIT_TARGET_MS,
      },
      cpuPerGet: {
        maxMs: CPU_PER_GET_TARGET_MS,
        ms: single.ledgerEnd.gatewayCpuMsPerRequest,
        met: single.ledgerEnd.gatewayCpuMsPerRequest <= CPU_PER_GET_TARGET_MS,
      },
      submitAndWaitVsDirect: {
        min: SUBMIT_TARGET,
        ratio: single.submit.ratioToDirect.throughput,
        met: single.submit.ratioToDirect.throughput >= SUBMIT_TARGET,
      },
      webSocketVsDirect: ratiosAtLeast(COST_WS_TARGET, [
        single.stream.ratioToDirect.gatewayWebSocket,
        batchedStream.ratioToDirect.gatewayWebSocket,
      ]),
      listTwinVsDirect: ratiosAtLeast(LIST_TARGET, [
        single.stream.ratioToDirect.gatewayHttpList,
        batchedStream.ratioToDirect.gatewayHttpList,
      ]),
      ndjsonVsDirect: ratiosAtLeast(NDJSON_TARGET, [
        single.stream.ratioToDirect.gatewayNdjson ?? Number.NaN,
        batchedStream.ratioToDirect.gatewayNdjson ?? Number.NaN,
      ]),
      ndjsonFirstElement: {
        maxMs: NDJSON_FIRST_ELEMENT_TARGET_MS,
        elements: list?.elements,
        ms: single.stream.ndjsonFirstElementMs,
        met:
          (single.stream.ndjsonFirstElementMs ?? Number.POSITIVE_INFINITY) <= NDJSON_FIRST_ELEMENT_TARGET_MS,
      },
      listTwinPeakRss: {
        elements: list?.elements,
        maxTimesAnswer: LIST_RSS_TARGET,
        /** (peak RSS while answering - RSS before the request) / the answer's bytes. */
        timesAnswer: listRssRatio,
        met: listRssRatio !== undefined && listRssRatio <= LIST_RSS_TARGET,
      },
    },
  };
}

export type LocalRequestCost = Awaited<ReturnType<typeof requestCost>>;
