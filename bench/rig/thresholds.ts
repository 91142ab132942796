import type { Verdict } from "../load/thresholds.js";
import { UsageError } from "../load/usage-error.js";
import type { Figure, FigureUnit } from "./figures.js";

/**
 * `--threshold` of `load.js local`: `SCENARIO.FIGURE OP VALUE[UNIT]` over the comparison's named
 * figures (local-figures.ts), e.g. `fanout.cpu-per-delivery<1.5us`, `update-stream.ws-vs-direct>=0.8`,
 * `idle.rss-per-connection<16KiB`. The load tool's thresholds read latency histograms; these read
 * one number each, so they have a syntax of their own with the same operators and verdicts.
 */
export interface LocalThreshold {
  text: string;
  scenario: string;
  /** The figure's full name, scenario included: `fanout.cpu-per-delivery`. */
  figure: string;
  op: "<" | "<=" | ">" | ">=";
  value: number;
  unit?: string;
}

const SYNTAX =
  /^([a-z][a-z-]*)\.([a-z0-9][a-z0-9.-]*?)\s*(<=|>=|<|>)\s*(-?\d+(?:\.\d+)?)\s*(us|µs|ms|s|B|KiB|MiB|x|\/s)?$/;

export function parseLocalThreshold(text: string): LocalThreshold {
  const match = SYNTAX.exec(text.trim());
  if (!match)
    throw new UsageError(
      `--threshold '${text}' is not SCENARIO.FIGURE<VALUE, e.g. 'fanout.cpu-per-delivery<1.5us', 'update-stream.ws-vs-direct>=0.8', 'idle.rss-per-connection<16KiB'`,
    );
  const [, scenario, name, op, number, unit] = match as unknown as [
    string,
    string,
    string,
    LocalThreshold["op"],
    string,
    string | undefined,
  ];
  return {
    text,
    scenario,
    figure: `${scenario}.${name}`,
    op,
    value: Number(number),
    ...(unit !== undefined && { unit }),
  };
}

/** A threshold's unit in its figure's unit: how many of the figure's units one of its own is. */
const SCALES: Partial<Record<FigureUnit, Record<string, number>>> = {
  µs: { us: 1, µs: 1, ms: 1000, s: 1_000_000 },
  ms: { us: 0.001, µs: 0.001, ms: 1, s: 1000 },
  B: { B: 1, KiB: 1024, MiB: 2 ** 20 },
  "/s": { "/s": 1 },
  x: { x: 1 },
};

/**
 * The verdict on `figures` (NaN and breached when the run has no such figure, or the unit does
 * not fit it: a threshold nobody can read must not pass).
 */
export function judgeLocal(threshold: LocalThreshold, figures: Record<string, Figure>): Verdict {
  const figure = figures[threshold.figure];
  const scale =
    figure === undefined
      ? undefined
      : threshold.unit === undefined
        ? 1
        : SCALES[figure.unit]?.[threshold.unit];
  if (figure === undefined || scale === undefined)
    return { threshold: threshold.text, actual: Number.NaN, passed: false };
  const limit = threshold.value * scale;
  const actual = figure.value;
  const passed =
    threshold.op === "<"
      ? actual < limit
      : threshold.op === "<="
        ? actual <= limit
        : threshold.op === ">"
          ? actual > limit
          : actual >= limit;
  return { threshold: threshold.text, actual, passed };
}
