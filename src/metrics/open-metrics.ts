import { type Metric, type OpenMetricsContentType, Registry } from "prom-client";
import type { MetricJson } from "./histogram-exemplars.js";

/**
 * Metrics snapshots (`getMetricsAsJSON()`, exemplars attached) as OpenMetrics 1.0 text, written
 * by prom-client in a registry made for this scrape. Never by switching a live registry to
 * OpenMetrics: prom-client renames a counter for OpenMetrics on the metric object itself (the
 * `_total` dropped from its name, for good), and a registry's content type is shared by scrapes
 * that overlap while their collects wait (the ledger probe), so one scrape's switch would change
 * another's format.
 */
export async function openMetricsExposition(
  metrics: readonly MetricJson[],
): Promise<{ contentType: string; text: string }> {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const metric of metrics) {
    // The family is named without `_total`; prom-client adds it to the counter's samples. (Its
    // types declare `type` a numeric enum; at run time it is the text.)
    const counter = (metric.type as unknown) === "counter";
    const name = counter ? metric.name.replace(/_total$/, "") : metric.name;
    const family = { ...metric, name };
    // prom-client writes whatever has a name, help, type and get(), as its AggregatorRegistry's
    // merged metrics are: a snapshot needs no live metric behind it.
    registry.registerMetric({ ...family, get: () => family } as unknown as Metric);
  }
  return { contentType: registry.contentType, text: await registry.metrics() };
}
