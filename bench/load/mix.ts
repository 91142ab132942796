import { UsageError } from "./usage-error.js";

/**
 * How the run's request scenarios and workflows share the load: each takes a weight of the run's
 * rate (`--rate`, `--stages`; the closed model's loops pick by the same weights), or a rate of its
 * own for the whole run (open model: its own arrivals, whatever the others' rate).
 */
export type MixEntry = { name: string; weight: number } | { name: string; ratePerSecond: number };

/** `--mix 'iou-transfer=3,iou-split=1,iou-merge@5/s'`: NAME=WEIGHT or NAME@RATE, by name. */
export function parseMix(
  text: string,
  parseRate: (text: string, flag: string) => number,
): Map<string, MixEntry> {
  const entries = new Map<string, MixEntry>();
  for (const part of text.split(",").map((p) => p.trim())) {
    if (part === "") continue;
    const weighted = /^([a-z][a-z-]*)=(.*)$/.exec(part);
    const rated = /^([a-z][a-z-]*)@(.*)$/.exec(part);
    let entry: MixEntry;
    if (weighted) {
      const weight = Number(weighted[2]);
      if (!Number.isInteger(weight) || weight < 1)
        throw new UsageError(
          `--mix ${weighted[1]}= takes a whole weight of at least 1; got '${weighted[2]}'`,
        );
      entry = { name: weighted[1] as string, weight };
    } else if (rated) {
      entry = {
        name: rated[1] as string,
        ratePerSecond: parseRate(rated[2] as string, `--mix ${rated[1]}@`),
      };
    } else {
      throw new UsageError(
        `--mix takes NAME=WEIGHT or NAME@RATE, comma-separated, e.g. 'iou-transfer=3,iou-split=1,iou-merge@5/s'; got '${part}'`,
      );
    }
    if (entries.has(entry.name)) throw new UsageError(`--mix names ${entry.name} twice`);
    entries.set(entry.name, entry);
  }
  if (entries.size === 0) throw new UsageError("--mix names none");
  return entries;
}

/**
 * The order in which the scenarios sharing the run's rate take its arrivals: one cycle of
 * sum(weights), interleaved (smooth weighted round robin: weights 3 and 1 give a a b a, not
 * a a a b), so that every stretch of a run has its share of each.
 */
export function weightedCycle(entries: readonly { name: string; weight: number }[]): string[] {
  const total = entries.reduce((sum, e) => sum + e.weight, 0);
  const current = entries.map(() => 0);
  const cycle: string[] = [];
  for (let n = 0; n < total; n++) {
    let best = 0;
    entries.forEach((entry, i) => {
      current[i] = (current[i] as number) + entry.weight;
      if ((current[i] as number) > (current[best] as number)) best = i;
    });
    current[best] = (current[best] as number) - total;
    cycle.push((entries[best] as { name: string }).name);
  }
  return cycle;
}
