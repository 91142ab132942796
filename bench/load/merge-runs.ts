import type { LoadResult, TimelinePoint } from "./load-result.js";
import { overloadReason } from "./overload.js";
import { decodeHistogram, encodeHistogram, histogram, type IntervalFigures, summarize } from "./recorder.js";

type Series = LoadResult["scenarios"][string];

/**
 * `bench merge A.json B.json ...`: runs made at the same time from several machines against one
 * server, as one result, as if one tool had sent all their load. Counts, errors by code,
 * arrivals offered and dropped add up; rates add (each run's over its own window, the windows
 * side by side); every percentile is read from the sum of the runs' HDR histograms, never
 * averaged; the timelines add point by point (the runs' intervals must be the same). The
 * thresholds are then judged on this result, as on one run's.
 */
export function mergeRuns(
  runs: readonly { file: string; result: LoadResult }[],
  /** The percentiles to show; the first run's without it. */
  shown?: readonly number[],
): LoadResult {
  const [first] = runs;
  if (first === undefined || runs.length < 2) throw new Error("bench merge takes two results files or more");
  const results = runs.map((run) => run.result);
  const interval = first.result.load.intervalSeconds;
  for (const { file, result } of runs) {
    if (result.load.intervalSeconds !== interval)
      throw new Error(
        `${file} has intervals of ${result.load.intervalSeconds} s, ${first.file} of ${interval} s: their timelines do not add up`,
      );
    for (const [name, s] of [["overall", result.overall], ...Object.entries(result.scenarios)] as const)
      if (typeof s.histogram !== "string")
        throw new Error(
          `${file}: ${name} has no histogram (a file of an older tool): its percentiles cannot be merged`,
        );
  }
  const percentiles = [...(shown ?? first.result.load.percentiles ?? [50, 95, 99, 99.9])];
  const names = [...new Set(results.flatMap((r) => Object.keys(r.scenarios)))];
  const scenarios: LoadResult["scenarios"] = {};
  for (const name of names)
    scenarios[name] = mergeSeries(
      results.flatMap((r) => r.scenarios[name] ?? []),
      percentiles,
    );
  const overall = mergeSeries(
    results.map((r) => ({ ...r.overall, errorsByCode: {} })),
    percentiles,
  );
  const { errorsByCode: _, ...overallFigures } = overall;
  const sum = (read: (r: LoadResult) => number | undefined) =>
    results.reduce((n, r) => n + (read(r) ?? 0), 0);
  const streams: Record<string, number> = {};
  for (const r of results)
    for (const [name, count] of Object.entries(r.load.streams ?? {}))
      streams[name] = (streams[name] ?? 0) + count;
  const urls = [...new Set(results.map((r) => r.target.url))];
  const overloaded = [
    ...(overall.offered !== undefined
      ? [overloadReason(overall as Required<typeof overall>)].filter((r) => r !== undefined)
      : []),
    ...runs.flatMap(({ file, result }) => (result.overloaded ? [`${file}: ${result.overloaded}`] : [])),
  ];
  const interrupted = results.some((r) => r.load.interrupted);
  return {
    tool: "ledger-json-gateway bench",
    command: `ledger-json-gateway bench merge ${runs.map((run) => run.file).join(" ")}`,
    startedAt: results.map((r) => r.startedAt).sort()[0] as string,
    target: { ...first.result.target, url: urls.join(", ") },
    load: {
      description: `${runs.length} runs merged: ${[...new Set(results.map((r) => r.load.description))].join("; ")}`,
      model: first.result.load.model,
      durationSeconds: Math.max(...results.map((r) => r.load.durationSeconds)),
      warmUpSeconds: first.result.load.warmUpSeconds,
      intervalSeconds: interval,
      scenarios: [...new Set(results.flatMap((r) => r.load.scenarios))],
      subscribers: sum((r) => r.load.subscribers),
      streams,
      connections: sum((r) => r.load.connections),
      prefix: first.result.load.prefix,
      ...(interrupted && { interrupted: true }),
      ...(first.result.load.maxInFlight !== undefined && { maxInFlight: sum((r) => r.load.maxInFlight) }),
      percentiles,
      merged: runs.map(({ file, result }) => ({
        file,
        startedAt: result.startedAt,
        prefix: result.load.prefix,
      })),
    },
    ...(overloaded.length > 0 && { overloaded: overloaded.join("; ") }),
    overall: overallFigures,
    scenarios,
    timeline: mergeTimelines(
      results.map((r) => r.timeline),
      percentiles,
    ),
    thresholds: [],
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function mergeSeries(parts: readonly Series[], percentiles: readonly number[]): Series {
  const all = histogram();
  for (const part of parts) all.add(decodeHistogram(part.histogram));
  const errorsByCode: Record<string, number> = {};
  for (const part of parts)
    for (const [code, n] of Object.entries(part.errorsByCode))
      errorsByCode[code] = (errorsByCode[code] ?? 0) + n;
  const total = (read: (s: Series) => number | undefined) =>
    parts.some((s) => read(s) !== undefined) ? parts.reduce((n, s) => n + (read(s) ?? 0), 0) : undefined;
  const optional = {
    offered: total((s) => s.offered),
    dropped: total((s) => s.dropped),
    offeredPerSecond: total((s) => s.offeredPerSecond),
    achievedPerSecond: total((s) => s.achievedPerSecond),
    deliveries: total((s) => s.deliveries),
    elements: total((s) => s.elements),
    elementsPerSecond: total((s) => s.elementsPerSecond),
  };
  const stepNames = [...new Set(parts.flatMap((s) => Object.keys(s.steps ?? {})))];
  return {
    requests: all.totalCount,
    errors: parts.reduce((n, s) => n + s.errors, 0),
    errorsByCode,
    ratePerSecond: round1(parts.reduce((n, s) => n + s.ratePerSecond, 0)),
    latencyMs: summarize(all, percentiles),
    histogram: encodeHistogram(all),
    ...Object.fromEntries(
      Object.entries(optional)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => [key, key.endsWith("PerSecond") ? round1(value as number) : value]),
    ),
    ...(stepNames.length > 0 && {
      steps: Object.fromEntries(
        stepNames.map((step) => [
          step,
          mergeSeries(
            parts.flatMap((s) => s.steps?.[step] ?? []),
            percentiles,
          ),
        ]),
      ),
    }),
  };
}

/** Point i of every run as one point: the runs' intervals are the same length, side by side. */
function mergeTimelines(
  timelines: readonly TimelinePoint[][],
  percentiles: readonly number[],
): TimelinePoint[] {
  const length = Math.max(...timelines.map((t) => t.length));
  const points: TimelinePoint[] = [];
  for (let i = 0; i < length; i++) {
    const at = timelines.flatMap((t) => t[i] ?? []);
    const names = [...new Set(at.flatMap((p) => Object.keys(p.scenarios)))];
    const scenarios: Record<string, IntervalFigures> = {};
    for (const name of names) {
      const parts = at.flatMap((p) => p.scenarios[name] ?? []);
      const all = histogram();
      for (const part of parts) if (part.histogram) all.add(decodeHistogram(part.histogram));
      const total = (read: (f: IntervalFigures) => number | undefined) =>
        parts.some((f) => read(f) !== undefined) ? parts.reduce((n, f) => n + (read(f) ?? 0), 0) : undefined;
      const offered = total((f) => f.offered);
      const dropped = total((f) => f.dropped);
      const elements = total((f) => f.elements);
      scenarios[name] = {
        count: parts.reduce((n, f) => n + f.count, 0),
        errors: parts.reduce((n, f) => n + f.errors, 0),
        latencyMs: summarize(all, percentiles),
        histogram: encodeHistogram(all),
        ...(offered !== undefined && { offered }),
        ...(dropped !== undefined && { dropped }),
        ...(elements !== undefined && { elements }),
      };
    }
    points.push({
      seconds: Math.max(...at.map((p) => p.seconds)),
      scenarios,
      clientLoopDelayMs: {
        p99: Math.max(...at.map((p) => p.clientLoopDelayMs.p99)),
        max: Math.max(...at.map((p) => p.clientLoopDelayMs.max)),
      },
    });
  }
  return points;
}
