import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { abortingBreach } from "./abort-on-fail.js";
import { type AcsReader, acsReader } from "./acs-reader.js";
import { ArrivalSchedule, runArrivals } from "./arrivals.js";
import { JsonClient } from "./json-client.js";
import { LagTracker } from "./lag-tracker.js";
import { completionLagSubscriber, completionsSubscriber, updatesSubscriber } from "./ledger-streams.js";
import type { LiveMetrics } from "./live-metrics.js";
import type { LoadOptions } from "./load-options.js";
import type { LoadResult, TimelinePoint } from "./load-result.js";
import { weightedCycle } from "./mix.js";
import { OfferedLoad } from "./offered-load.js";
import { overloadReason } from "./overload.js";
import { prepare, SANDBOX_CAVEAT } from "./prepare.js";
import { progressLine } from "./progress-line.js";
import type { RawSamples } from "./raw-samples.js";
import { type IntervalFigures, mergedTotals, SeriesRecorder } from "./recorder.js";
import { type Outcome, requestScenario } from "./request-scenarios.js";
import { WORKFLOW_NAMES } from "./scenario-options.js";
import type { StreamSubscriber } from "./stream-subscriber.js";
import { percentileOf } from "./thresholds.js";
import { openTokenSource, type TokenSource } from "./token-source.js";
import { workflowRunner } from "./workflows/workflow-runner.js";

/** How long the run waits, after its last arrival, for answers still out. */
const DRAIN_MS = 10_000;
/** And for the subscribers to receive the last commands' transactions. */
const LAG_DRAIN_MS = 3_000;

/**
 * One load run against a JSON Ledger API server: prepare (prepare.ts), open the subscribers, send
 * the requests on the open model's schedule (arrivals.ts) or from the closed model's loops,
 * record each series per interval with a progress line on `log`, drain, take back the rights, and
 * answer the results (without any token).
 */
export async function runLoad(
  options: LoadOptions,
  command: string,
  log: (line: string) => void,
  /** Aborted (Ctrl-C, SIGTERM): no request is sent after it, and the run finishes as at its end. */
  stop: AbortSignal = new AbortController().signal,
  /** Where the figures go while the run lasts, besides the progress line. */
  outputs: { raw?: RawSamples; metrics?: LiveMetrics } = {},
): Promise<LoadResult> {
  // Stopped from outside, or by --abort-on-fail from inside: the run ends the same way.
  const halt = new AbortController();
  stop.addEventListener("abort", () => halt.abort(), { once: true });
  if (stop.aborted) halt.abort();
  /** The threshold that stopped the run (--abort-on-fail). */
  let abortedBy: { threshold: string; actual: number; atSeconds: number } | undefined;
  const tokens = await openTokenSource(options.token, log);
  /** The --party parties' own tokens (each renewed on its own), by party. */
  const partyTokens = new Map<string, TokenSource>();
  const client = new JsonClient(options.url, options.connections);
  const subscribers: StreamSubscriber[] = [];
  const readers: AcsReader[] = [];
  /** Takes back the rights granted, until it has. */
  let cleanUp: (() => Promise<void>) | undefined;
  try {
    for (const { party, token: from } of options.parties ?? [])
      if (from) partyTokens.set(party, await openTokenSource(from, log));
    const prepared = await prepare(
      client,
      tokens.current,
      {
        ...(options.parties && {
          parties: options.parties.map(({ party }) => ({
            party,
            token: (partyTokens.get(party) ?? tokens).current,
          })),
        }),
        prepareParties: options.prepareParties,
        createsSampleIous:
          options.requests.some((name) => name !== "reads") ||
          options.acsReaders > 0 ||
          options.workflows.some((workflow) => WORKFLOW_NAMES.includes(workflow.name)),
        ...(options.template && { template: options.template }),
        ...((options.requests.includes("acs") ||
          options.requests.includes("updates-list") ||
          options.acsReaders > 0) && { acsContracts: options.acsContracts }),
        ...(options.requests.includes("submit-and-wait-for-reassignment") && {
          reassignmentContracts: options.reassignmentContracts,
        }),
      },
      log,
    );
    cleanUp = prepared.cleanUp;
    const { server } = prepared;
    // The built-in scenarios, the streams and the readers act as the first party, with its token.
    const runTokens = partyTokens.get(prepared.party) ?? tokens;
    const token = runTokens.current;
    log(
      `bench: ${options.url} (Ledger API ${server.version}, participant ${server.participantId}): ${describeLoad(options)}`,
    );
    if (server.embeddedSandbox) log(`bench: every figure below is ${SANDBOX_CAVEAT}`);

    // The summaries hold the percentiles shown and those the thresholds read (judged each interval).
    const percentiles = [
      ...new Set([
        ...options.percentiles,
        ...options.thresholds.flatMap((t) => percentileOf(t.metric) ?? []),
      ]),
    ];
    const recorder = (name: string) => new SeriesRecorder(outputs.metrics?.series(name), percentiles);
    /** The scenarios that send: requests and workflows (an iteration of a workflow is one arrival). */
    const sending = [...options.requests, ...options.workflows.map((w) => w.name)];
    const series = new Map<string, SeriesRecorder>(sending.map((name) => [name, recorder(name)]));
    /** Each workflow's steps, by workflow and step: the results file's counts per step. */
    const steps = new Map(
      options.workflows.map((w) => [
        w.name,
        new Map(w.steps.map((step) => [step.name, new SeriesRecorder(undefined, percentiles)])),
      ]),
    );
    const completions = options.requests.includes("submit-async") ? recorder("completions") : undefined;
    const updates = options.subscribers > 0 ? recorder("updates") : undefined;
    const lag = new LagTracker(options.subscribers);
    const completionsStream = options.completionSubscribers > 0 ? recorder("completions-stream") : undefined;
    const completionLag = new LagTracker(options.completionSubscribers);
    const acsStream = options.acsReaders > 0 ? recorder("acs-stream") : undefined;
    const open = options.model.kind === "open";
    if (open) outputs.metrics?.openScenarios(sending);
    const offered = new OfferedLoad(open ? options.maxInFlight : Number.POSITIVE_INFINITY, (name) =>
      outputs.metrics?.drop(name),
    );
    /** The acs-stream reads' contracts: over the window, and over the interval. */
    const acsElements = { total: 0, interval: 0 };
    const awaitingCompletion = new Map<string, number>();
    const now = () => performance.now();

    const streams = { url: options.url, token, prepared, now };
    const updateStreams = { ...streams, lag, deliveries: 0, lags: updates as SeriesRecorder };
    for (let i = 0; i < options.subscribers; i++) subscribers.push(updatesSubscriber(updateStreams));
    if (completions) subscribers.push(completionsSubscriber({ ...streams, awaitingCompletion, completions }));
    const completionStreams = { ...streams, lag: completionLag, lags: completionsStream as SeriesRecorder };
    for (let i = 0; i < options.completionSubscribers; i++)
      subscribers.push(completionLagSubscriber(completionStreams));

    if (server.ledgerJsonGateway)
      runTokens.onChange((renewed) => {
        for (const subscriber of subscribers) subscriber.renew(renewed);
        log(`token: the renewed token sent in band to ${subscribers.length} streams`);
      });

    /** Set after the drain: an answer later than that was already counted as unanswered. */
    let finished = false;
    type Sender = (seq: number, sentAt: number, measured: boolean) => Promise<Outcome>;
    const senders = new Map<string, Sender>([
      ...options.requests.map(
        (name) =>
          [
            name,
            requestScenario(name, { client, token, prepared, lag, completionLag, awaitingCompletion }),
          ] as const,
      ),
      ...options.workflows.map(
        (workflow) =>
          [
            workflow.name,
            workflowRunner(workflow, {
              client,
              actors: prepared.actors,
              prefix: prepared.prefix,
              steps: steps.get(workflow.name) as Map<string, SeriesRecorder>,
              now,
              counting: () => !finished,
            }),
          ] as const,
      ),
    ]);
    /** The order the scenarios sharing the run's rate (or loops) take its arrivals in, by weight. */
    const cycle = weightedCycle(options.mix.flatMap((entry) => ("weight" in entry ? [entry] : [])));
    const ownRates = options.mix.flatMap((entry) => ("ratePerSecond" in entry ? [entry] : []));
    const sequence = new Map<string, number>();
    /** Requests sent and not yet answered, with the scenario of each and whether it is measured. */
    const inFlight = new Map<Promise<void>, { name: string; measured: boolean }>();
    const startedAt = now();
    const measuredFrom = startedAt + options.warmUpMs;
    /** An answer after it (or after a stop) is not achieved inside the window. */
    const plannedEnd = measuredFrom + options.durationMs;
    /** Set when the last request was sent: a stream read begun after it is not measured. */
    let windowEnd = Number.POSITIVE_INFINITY;
    for (let i = 0; i < options.acsReaders; i++)
      readers.push(
        acsReader({
          url: options.url,
          client,
          token,
          prepared,
          reads: acsStream as SeriesRecorder,
          onElements: (count) => {
            acsElements.total += count;
            acsElements.interval += count;
          },
          measured: (at) => at >= measuredFrom && at < windowEnd,
          now,
        }),
      );
    const send = (i: number, sentAt: number) => sendAs(cycle[i % cycle.length] as string, sentAt);
    /** Sends one arrival of `name`, unless the in-flight cap drops it (then resolves at once). */
    const sendAs = (name: string, sentAt: number): Promise<void> => {
      const measured = sentAt >= measuredFrom;
      if (measured && open) outputs.metrics?.offer(name);
      if (!offered.arrive(name, measured)) return Promise.resolve();
      const seq = sequence.get(name) ?? 0;
      sequence.set(name, seq + 1);
      const recorder = series.get(name) as SeriesRecorder;
      const done = (senders.get(name) as Sender)(seq, sentAt, measured).then((outcome) => {
        offered.settled(name, measured && !halt.signal.aborted && now() < plannedEnd);
        if (!measured || finished) return;
        if (outcome === undefined) recorder.record(now() - sentAt);
        else recorder.error(outcome);
      });
      inFlight.set(done, { name, measured });
      void done.finally(() => inFlight.delete(done));
      return done;
    };

    const timeline: TimelinePoint[] = [];
    // The tool's own event loop: when it is late, so are its sends and its reads of answers and
    // frames, and the figures hold the tool's delay as well as the server's.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    /** Every series' figures from the end of the warm-up, over `seconds` of it. */
    const results = (seconds: number) => {
      const scenarios: LoadResult["scenarios"] = {};
      for (const [name, recorder] of series) {
        const stepRecorders = steps.get(name);
        scenarios[name] = {
          ...recorder.result(seconds),
          ...(open && offered.result(name, seconds)),
          ...(stepRecorders && {
            steps: Object.fromEntries([...stepRecorders].map(([step, r]) => [step, r.result(seconds)])),
          }),
        };
      }
      if (completions) scenarios.completions = completions.result(seconds);
      if (updates) scenarios.updates = { ...updates.result(seconds), deliveries: updateStreams.deliveries };
      if (completionsStream) scenarios["completions-stream"] = completionsStream.result(seconds);
      if (acsStream)
        scenarios["acs-stream"] = {
          ...acsStream.result(seconds),
          elements: acsElements.total,
          elementsPerSecond: Math.round(acsElements.total / seconds),
        };
      const overall = {
        ...mergedTotals([...series.values()], seconds, percentiles),
        ...(open && offered.overall(seconds)),
      };
      return { overall, scenarios };
    };
    let lastTick = measuredFrom;
    const intervals = startIntervals(options, measuredFrom, now, (endAt) => {
      const intervalSeconds = Math.max(0, endAt - lastTick) / 1000;
      lastTick = endAt;
      const point: TimelinePoint = {
        seconds: Math.round((endAt - measuredFrom) / 100) / 10,
        scenarios: {},
        clientLoopDelayMs: {
          p99: Math.round(loopDelay.percentile(99) / 1e4) / 100,
          max: Math.round(loopDelay.max / 1e4) / 100,
        },
      };
      loopDelay.reset();
      const cuts = [...series].map(([name, recorder]) => [name, recorder.cut()] as const);
      const arrivals = offered.cut();
      for (const [name, cut] of cuts)
        point.scenarios[name] = {
          ...figures(cut),
          ...(open && {
            offered: arrivals.get(name)?.offered ?? 0,
            dropped: arrivals.get(name)?.dropped ?? 0,
          }),
        };
      if (completions) point.scenarios.completions = figures(completions.cut());
      if (updates) point.scenarios.updates = figures(updates.cut());
      if (completionsStream) point.scenarios["completions-stream"] = figures(completionsStream.cut());
      if (acsStream) {
        point.scenarios["acs-stream"] = { ...figures(acsStream.cut()), elements: acsElements.interval };
        acsElements.interval = 0;
      }
      timeline.push(point);
      log(
        progressLine(
          point,
          cuts.map(([, cut]) => cut.raw),
          intervalSeconds,
          { totalSeconds: options.durationMs / 1000, percentiles: options.percentiles, open },
        ),
      );
      outputs.raw?.write(
        Object.entries(point.scenarios).map(([name, f]) => ({
          time: new Date(Date.now() - (now() - endAt)).toISOString(),
          seconds: point.seconds,
          series: name,
          ...f,
        })),
      );
      outputs.metrics?.inFlight.set(offered.outstanding);
      outputs.metrics?.loopDelay.set(point.clientLoopDelayMs.p99 / 1000);
      if (options.abortOnFail && !halt.signal.aborted) {
        const soFar = Math.max(0.001, (endAt - measuredFrom) / 1000);
        const breach = abortingBreach(options.thresholds, results(soFar), timeline.length);
        if (breach) {
          abortedBy = { threshold: breach.threshold, actual: breach.actual, atSeconds: point.seconds };
          log(
            `bench: threshold ${breach.threshold} breached by the run so far (measured ${breach.actual}): stopping (--abort-on-fail)`,
          );
          halt.abort();
        }
      }
    });

    if (options.warmUpMs > 0) log(`bench: warming up for ${options.warmUpMs / 1000} s (not recorded)`);
    // Scenarios with a rate of their own: their own arrivals, beside the shared ones.
    const ownArrivals = ownRates.map(({ name, ratePerSecond }) =>
      runArrivals(
        new ArrivalSchedule(
          [{ durationMs: options.durationMs, rate: ratePerSecond }],
          ratePerSecond,
          options.warmUpMs,
        ),
        startedAt,
        now,
        (_i, dueMs) => {
          sendAs(name, startedAt + dueMs);
        },
        () => halt.signal.aborted,
      ),
    );
    if (cycle.length === 0) {
      // acs-stream alone, or only scenarios of their own rates: those are the load.
      const endAt = measuredFrom + options.durationMs;
      while (now() < endAt && !halt.signal.aborted) await sleep(Math.min(100, endAt - now()));
    } else if (options.model.kind === "open") {
      const schedule = new ArrivalSchedule(options.model.stages, options.model.startRate, options.warmUpMs);
      await runArrivals(
        schedule,
        startedAt,
        now,
        (i, dueMs) => {
          send(i, startedAt + dueMs);
        },
        () => halt.signal.aborted,
      );
    } else {
      const endAt = measuredFrom + options.durationMs;
      let next = 0;
      await Promise.all(
        Array.from({ length: options.model.concurrency }, async () => {
          while (now() < endAt && !halt.signal.aborted) await send(next++, now());
        }),
      );
    }
    await Promise.all(ownArrivals);
    const lastSendAt = now();
    // The answers still out are the last interval's, cut once they are in.
    intervals.stopTimer();
    windowEnd = lastSendAt;
    await drain(inFlight, DRAIN_MS, now);
    finished = true;
    for (const { name, measured } of inFlight.values())
      if (measured) series.get(name)?.error(`unanswered ${DRAIN_MS / 1000} s after the last request`);
    await waitUntil(() => awaitingCompletion.size === 0, LAG_DRAIN_MS);
    if (options.subscribers > 0) await waitUntil(() => lag.outstanding() === 0, LAG_DRAIN_MS);
    if (options.completionSubscribers > 0)
      await waitUntil(() => completionLag.outstanding() === 0, LAG_DRAIN_MS);
    for (const _ of awaitingCompletion) completions?.error("no completion by the end");
    intervals.finish(Math.max(lastTick, Math.min(lastSendAt, plannedEnd)));
    loopDelay.disable();
    for (const subscriber of subscribers.splice(0)) subscriber.close();
    for (const reader of readers.splice(0)) reader.close();
    await takeBack(cleanUp, log);
    cleanUp = undefined;

    // An interrupted run is measured over what it ran of its window.
    const seconds = halt.signal.aborted
      ? Math.max(0.001, Math.min(options.durationMs, lastSendAt - measuredFrom) / 1000)
      : options.durationMs / 1000;
    const { overall, scenarios } = results(seconds);
    const overloaded = open ? overloadReason(offered.overall(seconds)) : undefined;
    return {
      tool: "ledger-json-gateway bench",
      command,
      startedAt: new Date(Date.now() - (now() - startedAt)).toISOString(),
      target: { url: options.url, ...server, ...(server.embeddedSandbox && { caveat: SANDBOX_CAVEAT }) },
      load: {
        description: describeLoad(options),
        model: options.model,
        durationSeconds: seconds,
        warmUpSeconds: options.warmUpMs / 1000,
        intervalSeconds: options.intervalMs / 1000,
        scenarios: [...options.mix.map((entry) => entry.name), ...Object.keys(streamCounts(options))],
        subscribers: options.subscribers,
        streams: streamCounts(options),
        connections: options.connections,
        prefix: prepared.prefix,
        ...(stop.aborted && { interrupted: true }),
        ...(abortedBy && { abortedBy }),
        ...(open && { maxInFlight: options.maxInFlight }),
        percentiles: options.percentiles,
      },
      ...(overloaded && { overloaded }),
      overall,
      scenarios,
      timeline,
      thresholds: [],
    };
  } finally {
    for (const subscriber of subscribers) subscriber.close();
    for (const reader of readers) reader.close();
    if (cleanUp) await takeBack(cleanUp, log);
    client.close();
    tokens.close();
    for (const source of partyTokens.values()) source.close();
  }
}

/** The stream scenarios of the run, each with its count of streams. */
function streamCounts(options: LoadOptions): Partial<Record<keyof typeof STREAM_LABELS, number>> {
  return {
    ...(options.subscribers > 0 && { updates: options.subscribers }),
    ...(options.completionSubscribers > 0 && { "completions-stream": options.completionSubscribers }),
    ...(options.acsReaders > 0 && { "acs-stream": options.acsReaders }),
  };
}

const STREAM_LABELS = {
  updates: "update subscribers",
  "completions-stream": "completion subscribers",
  "acs-stream": "ACS readers",
};

function figures(cut: IntervalFigures): IntervalFigures {
  return {
    count: cut.count,
    errors: cut.errors,
    latencyMs: cut.latencyMs,
    ...(cut.histogram !== undefined && { histogram: cut.histogram }),
  };
}

function describeLoad(options: LoadOptions): string {
  const model =
    options.mix.length === 0
      ? "no requests"
      : options.model.kind === "closed"
        ? `closed model, ${options.model.concurrency} concurrent loops`
        : options.model.stages.length === 1 && options.model.startRate > 0
          ? `open model, ${options.model.stages[0]?.rate}/s`
          : `open model, stages ${options.model.stages.map((s) => `${s.durationMs / 1000}s:${s.rate}/s`).join(",")}`;
  const streams = Object.entries(streamCounts(options)).map(
    ([name, n]) => `${n} ${STREAM_LABELS[name as keyof typeof STREAM_LABELS]}`,
  );
  // Weights and own rates shown only where a run has them: `iou-transfer=3 + iou-merge@5/s`.
  const shares = options.mix.map((entry) =>
    "ratePerSecond" in entry
      ? `${entry.name}@${entry.ratePerSecond}/s`
      : options.mix.some((other) => "weight" in other && other.weight !== 1)
        ? `${entry.name}=${entry.weight}`
        : entry.name,
  );
  const what = [...(shares.length > 0 ? [shares.join(" + ")] : []), ...streams];
  return `${what.join(", ")}; ${model} for ${options.durationMs / 1000} s after ${options.warmUpMs / 1000} s of warm-up`;
}

/**
 * A tick every interval from the end of the warm-up, each given the moment its interval ends;
 * `finish(at)` cuts the last one, ending at the window's end. No timer tick within a quarter of an
 * interval of the window's end: the last interval is cut once, by `finish`, whether the window
 * is a whole number of intervals or not (a timer tick at the end and then `finish` made two
 * points at the same second, the second of them nearly empty).
 */
function startIntervals(
  options: LoadOptions,
  from: number,
  now: () => number,
  tick: (endAt: number) => void,
) {
  let timer: NodeJS.Timeout | undefined;
  let ticks = 0;
  const lastTimerTick = from + options.durationMs - options.intervalMs / 4;
  const schedule = () => {
    ticks++;
    const at = from + ticks * options.intervalMs;
    if (at > lastTimerTick) return;
    timer = setTimeout(
      () => {
        tick(now());
        schedule();
      },
      Math.max(0, at - now()),
    );
  };
  schedule();
  return {
    stopTimer: () => clearTimeout(timer),
    finish: (at: number) => {
      clearTimeout(timer);
      tick(at);
    },
  };
}

async function drain(inFlight: Map<Promise<void>, unknown>, ms: number, now: () => number): Promise<void> {
  const until = now() + ms;
  while (inFlight.size > 0 && now() < until) await Promise.race([...inFlight.keys(), sleep(100)]);
}

async function waitUntil(done: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await sleep(50);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function takeBack(cleanUp: () => Promise<void>, log: (line: string) => void): Promise<void> {
  await cleanUp().catch((error: Error) =>
    log(`bench: could not take back the rights granted: ${error.message}`),
  );
}
