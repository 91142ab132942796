import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../proto/project-root.js";
import type { Tracing } from "./tracing.js";

/**
 * The gateway's spans when the environment asks for them: OTEL_TRACES_EXPORTER named (otlp,
 * console, zipkin) and not `none`, and OTEL_SDK_DISABLED not true. The SDK's own default for an
 * unset OTEL_TRACES_EXPORTER is otlp; the gateway's is off, so that a gateway nobody configured
 * for tracing neither loads the SDK nor sends anything anywhere. Undefined: off.
 */
export async function startTracing(
  env: NodeJS.ProcessEnv,
  worker: number | undefined,
): Promise<Tracing | undefined> {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  // As the SDK reads the list: `none` first turns it off.
  if (exporters.length === 0 || exporters[0] === "none") return undefined;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  // Loaded only now: some 30 MB of modules a gateway without tracing never reads.
  const { startOtelTracing } = await import("./otel-tracing.js");
  const { version } = JSON.parse(readFileSync(join(projectRoot(), "package.json"), "utf8")) as {
    version: string;
  };
  return startOtelTracing(version, worker);
}
