import { type Ledger, type LocalBench, withGateway, withSandbox } from "./ledger.js";
import { type SubmitAndWaitResult, submitAndWait } from "./scenarios/submit-and-wait.js";
import { type GatewayProcess, type UpdateStreamResult, updateStream } from "./scenarios/update-stream.js";

/**
 * The update streams over `ledger`: with `cost`, a gateway per transport and their CPU per
 * element; else one gateway for all, what a client of one gateway sees (make bench's table).
 */
export function streamOf(
  bench: LocalBench,
  phase: string,
  ledger: Ledger,
  cost: boolean,
): Promise<UpdateStreamResult> {
  const read = (
    webSocketGateway: GatewayProcess,
    listGateway: GatewayProcess,
    ndjsonGateway: GatewayProcess,
  ) =>
    updateStream({
      cost,
      progress: bench.progress(phase),
      sandboxPort: ledger.sandbox.port,
      webSocketGateway,
      listGateway,
      ndjsonGateway,
      party: ledger.sandbox.tickParty,
      lastOffset: ledger.sandbox.lastOffset,
      token: ledger.token,
      runs: bench.options.runs,
    });
  return cost
    ? withGateway(bench, ledger, (ws) =>
        withGateway(bench, ledger, (list) => withGateway(bench, ledger, (ndjson) => read(ws, list, ndjson))),
      )
    : withGateway(bench, ledger, (gateway) => read(gateway, gateway, gateway));
}

/** submit-and-wait through a gateway of its own, after `--warm-up` commands on each path. */
export function submitAndWaitOn(
  bench: LocalBench,
  phase: string,
  ledger: Ledger,
  withCpu: boolean,
): Promise<SubmitAndWaitResult> {
  const { commands, concurrency, warmUp } = bench.options;
  return withGateway(bench, ledger, (gateway) =>
    submitAndWait({
      progress: bench.progress(phase),
      sandboxPort: ledger.sandbox.port,
      gatewayPort: gateway.port,
      ...(withCpu && { gatewayPid: gateway.pid, sandboxPid: ledger.sandbox.child.pid as number }),
      party: ledger.sandbox.tickParty,
      token: ledger.token,
      commands,
      concurrency,
      warmUp,
    }),
  );
}

export interface StreamsAndCommands {
  /** update-stream, one event per transaction and `--batch` per transaction. */
  updates?: UpdateStreamResult;
  batched?: UpdateStreamResult;
  commands?: SubmitAndWaitResult;
}

/**
 * update-stream and submit-and-wait (make bench's table): the 1-event sandbox serves both, one
 * after the other, then a `--batch` sandbox the batched stream.
 */
export async function streamsAndCommands(bench: LocalBench): Promise<StreamsAndCommands> {
  const { scenarios, ticks, payloadBytes, runs, batch, commands, concurrency, warmUp } = bench.options;
  const result: StreamsAndCommands = {};
  if (!scenarios.has("update-stream") && !scenarios.has("submit-and-wait")) return result;
  const log = bench.progress("plan");
  await withSandbox(bench, 1, async (ledger) => {
    if (scenarios.has("update-stream")) {
      log(
        `update stream: ${ticks} ticks of ${payloadBytes} B, one per transaction, ` +
          `warm-up + ${runs} runs of direct gRPC, WebSocket and list twin ...`,
      );
      result.updates = await streamOf(bench, "update stream 1/tx", ledger, false);
    }
    if (scenarios.has("submit-and-wait")) {
      log(`submit-and-wait: ${commands} commands at concurrency ${concurrency} after ${warmUp} ...`);
      result.commands = await submitAndWaitOn(bench, "submit-and-wait", ledger, false);
    }
  });
  if (scenarios.has("update-stream")) {
    log(`update stream: ${ticks} ticks, ${batch} per transaction ...`);
    result.batched = await withSandbox(bench, batch, (ledger) =>
      streamOf(bench, `update stream ${batch}/tx`, ledger, false),
    );
  }
  return result;
}
