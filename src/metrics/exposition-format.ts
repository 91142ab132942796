import { Registry } from "prom-client";

/**
 * The two texts /metrics answers: Prometheus' text format 0.0.4, and OpenMetrics 1.0, the one
 * format with exemplars (the trace of an observation on its histogram bucket).
 */
export type ExpositionFormat = "prometheus" | "openmetrics";

export const EXPOSITION_CONTENT_TYPES: Readonly<Record<ExpositionFormat, string>> = {
  prometheus: Registry.PROMETHEUS_CONTENT_TYPE,
  openmetrics: Registry.OPENMETRICS_CONTENT_TYPE,
};

const OPENMETRICS = "application/openmetrics-text";
const TEXT = ["text/plain", "text/*", "*/*"];

/**
 * The format a scraper's `Accept` asks for: OpenMetrics when it names `application/openmetrics-text`
 * (unversioned or version 1.0.0, the one prom-client writes) with a weight at least that of plain
 * text, as Prometheus' default does (`application/openmetrics-text;version=1.0.0` first,
 * `text/plain;version=0.0.4;q=0.5` after); any other Accept, none included, gets the Prometheus
 * text it always got.
 */
export function expositionFormatOf(accept: string): ExpositionFormat {
  let openMetrics = 0;
  let text = 0;
  for (const range of accept.split(",")) {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    const parameter = (name: string) =>
      parameters.find((p) => p.startsWith(`${name}=`))?.slice(name.length + 1);
    const q = Number(parameter("q") ?? "1");
    const weight = Number.isFinite(q) ? q : 0;
    const version = parameter("version");
    if (type === OPENMETRICS && (version === undefined || version === "1.0.0"))
      openMetrics = Math.max(openMetrics, weight);
    else if (TEXT.includes(type)) text = Math.max(text, weight);
  }
  return openMetrics > 0 && openMetrics >= text ? "openmetrics" : "prometheus";
}
