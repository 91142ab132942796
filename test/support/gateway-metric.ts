/**
 * The sum of a gateway metric's series (from its /metrics, under the base URL's path prefix)
 * whose labels include every one of `labels` (written as in the exposition:
 * `endpoint="/v2/updates"`); every series of the metric, labelled or not, without any.
 */
export async function gatewayMetric(gatewayUrl: string, name: string, ...labels: string[]): Promise<number> {
  const text = await (await fetch(`${gatewayUrl.replace(/\/$/, "")}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, "gm"))]
    .filter((m) => labels.every((label) => (m[1] ?? "").split(",").includes(label)))
    .reduce((sum, m) => sum + Number(m[2]), 0);
}
