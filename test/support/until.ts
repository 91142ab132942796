/**
 * Polls until `check` holds: for what the system under test will do anyway (a handover after a
 * leave, a scrape, a call ending). No timing is asserted: the budget only ends a broken run
 * instead of letting it hang, and is generous for a loaded 2-core machine; the failure names the
 * check and, with `observed`, what was seen instead.
 */
export async function until(
  check: () => Promise<boolean> | boolean,
  options: { budgetMs?: number; observed?: () => Promise<string> | string } = {},
): Promise<void> {
  const budgetMs = options.budgetMs ?? 120_000;
  const deadline = Date.now() + budgetMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      const seen = options.observed ? `; observed: ${await options.observed()}` : "";
      throw new Error(`still not true after ${budgetMs} ms: ${check}${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
