import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startTracing } from "../../src/tracing/start-tracing.js";

/**
 * Span export is off unless the environment names an exporter: the SDK's own default (otlp for an
 * unset OTEL_TRACES_EXPORTER) would have every gateway nobody configured send spans to
 * localhost:4318. The on case, with a real receiver: test/e2e/otel-export.test.ts.
 */
describe("startTracing", () => {
  it("makes no spans without an exporter named, with none, or with the SDK disabled", async () => {
    for (const env of [
      {},
      { OTEL_TRACES_EXPORTER: "" },
      { OTEL_TRACES_EXPORTER: "none" },
      { OTEL_TRACES_EXPORTER: "none,otlp" },
      { OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" },
      // The endpoint alone does not turn it on.
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" },
    ]) {
      assert.equal(await startTracing(env, undefined), undefined, JSON.stringify(env));
    }
  });
});
