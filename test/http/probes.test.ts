import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { loadConfig } from "../../src/config/load-config.js";
import { startGateway } from "../../src/gateway.js";
import { type Stack, startStack } from "../support/stack.js";

describe("health probes and metrics", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it("answers /livez with an empty 200, no token needed", async () => {
    const res = await stack.request("/livez", { token: null });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
  });

  it("answers /readyz with 200 and a k8s-style report while the ledger is up", async () => {
    const res = await stack.request("/readyz", { token: null });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /\[\+\] ledger ok\nreadyz check passed/);
  });

  it("answers HEAD like GET, without a body", async () => {
    const res = await stack.request("/readyz", { method: "HEAD", token: null });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
  });

  it("exposes per-route metrics with bounded labels and no secrets", async () => {
    const party = `metrics-probe-${Date.now()}`;
    await stack.request(`/v2/parties/${party}`);
    await stack.request("/v2/version");
    const res = await stack.request("/metrics", { token: null });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(
      text,
      /ledger_gateway_http_requests_total\{route="\/v2\/version",method="GET",status_class="2xx"\} \d+/,
    );
    assert.match(
      text,
      /ledger_gateway_http_requests_total\{route="\/v2\/parties\/\{party\}",method="GET",status_class="2xx"\}/,
    );
    assert.match(
      text,
      /ledger_gateway_grpc_client_call_duration_seconds_count\{method="VersionService\/GetLedgerApiVersion",code="OK"\}/,
    );
    assert.match(text, /ledger_gateway_http_requests_in_flight \d+/);
    assert.match(text, /process_cpu_user_seconds_total/);
    assert.ok(!text.includes(party), "a raw path parameter leaked into the metrics");
    assert.ok(!text.includes(stack.token), "a token leaked into the metrics");
  });
});

describe("readiness without a ledger", () => {
  it("answers /readyz with 503 while the ledger cannot be reached", async () => {
    const config = loadConfig({ argv: ["--port", "0"], env: {} });
    // Port 1 on loopback: nothing listens there.
    const gateway = await startGateway(config, { host: "127.0.0.1", port: 1 }, pino({ level: "silent" }));
    try {
      const res = await fetch(`http://127.0.0.1:${gateway.port}/readyz`);
      assert.equal(res.status, 503);
      assert.match(await res.text(), /\[-\] ledger failed.*\nreadyz check failed/);
      const version = await fetch(`http://127.0.0.1:${gateway.port}/v2/version`, {
        headers: { authorization: "Bearer x.y.z" },
      });
      assert.equal(version.status, 503);
      const body = (await version.json()) as { code: string; grpcCodeValue: number };
      assert.equal(body.code, "UNAVAILABLE");
      assert.equal(body.grpcCodeValue, 14);
    } finally {
      await gateway.stop(100);
    }
  });
});
