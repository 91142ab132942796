import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { StreamedReader } from "./streamed-reader.js";

const TRACE_ID = "5bf92f3577b34da6a3ce929d0e0e4737";

/**
 * A streamed answer refused before its first element is answered as any request's error is: its
 * request's span says so too, not the 200 a streamed answer otherwise ends with.
 */
describe("the span of a streamed answer refused before its first element", () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  before(async () => {
    receiver = await startOtlpReceiver();
    // The SDK reads its configuration from process.env, as in production.
    Object.assign(process.env, {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "gateway-under-test",
      OTEL_TRACES_SAMPLER: "always_on",
      OTEL_BSP_SCHEDULE_DELAY: "50",
    });
    stack = await startStack();
  });
  after(async () => {
    await stack.stop();
    await receiver.close();
  });

  it("carries the refusal's status", { timeout: 30_000 }, async () => {
    const reader = new StreamedReader(
      stack,
      "/v2/updates",
      updatesRequest(partyFilter("nobody::1220"), 0),
      tokenFor("no-such-user"),
      "ndjson",
      { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
    );
    const end = await reader.ended;
    assert.notEqual(end.status, 200, reader.rest);
    const spans = await receiver.trace(TRACE_ID, (found) => found.some((s) => s.name === "POST /v2/updates"));
    const request = spans.find((s) => s.name === "POST /v2/updates");
    assert.equal(request?.attributes["http.response.status_code"], end.status);
  });
});
