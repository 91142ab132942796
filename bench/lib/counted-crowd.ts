/**
 * Runs `one` `count` times, `concurrency` at a time, and counts its outcomes (a close code, an
 * HTTP status): the micro benches' crowd of connections, each opened after the last one ended.
 */
export async function countedCrowd(
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
