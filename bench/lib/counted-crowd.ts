import { processCpuSeconds } from "./proc-stats.js";

/**
 * Runs `one` `count` times, `concurrency` at a time, and counts its outcomes (a close code, an
 * HTTP status): the micro benches' crowd of connections, each opened after the last one ended.
 */
async function countedCrowd(
  count: number,
  concurrency: number,
  one: () => Promise<string | number>,
): Promise<Record<string, number>> {
  const outcomes: Record<string, number> = {};
  let next = count;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next-- > 0) {
        const outcome = await one();
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    }),
  );
  return outcomes;
}

/**
 * A counted crowd of `count` after a warm-up crowd of `warmUp`, with the CPU the process `pid`
 * (the gateway) spent over the measured one, per connection in µs.
 */
export async function measuredCrowd(
  pid: number,
  crowd: { warmUp: number; count: number; concurrency: number },
  one: () => Promise<string | number>,
): Promise<{ cpuMicrosEach: number; outcomes: Record<string, number> }> {
  await countedCrowd(crowd.warmUp, crowd.concurrency, one);
  const before = processCpuSeconds(pid);
  const outcomes = await countedCrowd(crowd.count, crowd.concurrency, one);
  return { cpuMicrosEach: ((processCpuSeconds(pid) - before) * 1e6) / crowd.count, outcomes };
}
