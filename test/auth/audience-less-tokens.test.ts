import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AudienceLessTokens } from "../../src/auth/audience-less-tokens.js";
import { tokenWithoutAudience } from "../../src/jwt/bearer-token.js";
import { GatewayMetrics } from "../../src/metrics/gateway-metrics.js";
import { wsAuth } from "../../src/ws/ws-auth.js";
import { signToken } from "../jwt/test-tokens.js";
import { capturingLogger } from "../support/capturing-logger.js";

const scopeBased = signToken("scope-user", { audience: null });
const audienceBased = signToken("audience-user");

describe("tokens without aud (Canton 3.7 refuses scope-based tokens)", () => {
  it("tells a token without aud (absent, empty or []) from an audience-based one", () => {
    assert.equal(tokenWithoutAudience(scopeBased), true);
    assert.equal(tokenWithoutAudience(signToken("u", { audience: [] })), true);
    assert.equal(tokenWithoutAudience(signToken("u", { audience: "" })), true);
    assert.equal(tokenWithoutAudience(audienceBased), false);
    assert.equal(tokenWithoutAudience("not a jwt"), false);
    assert.equal(wsAuth(`Bearer ${scopeBased}`, "")?.claims.withoutAudience, true);
    assert.equal(wsAuth(`Bearer ${audienceBased}`, "")?.claims.withoutAudience, undefined);
  });

  it("warns at the first, then at most once per ten minutes with the count since, never naming token or user", () => {
    const { log, entries } = capturingLogger();
    let now = 1_000_000;
    const warnings = new AudienceLessTokens(log, undefined, () => now);
    warnings.seen();
    warnings.seen();
    warnings.seen();
    assert.equal(entries().length, 1);
    assert.equal(entries()[0]?.tokensWithoutAudience, 1);
    now += 10 * 60_000;
    warnings.seen();
    assert.equal(entries().length, 2);
    assert.equal(entries()[1]?.tokensWithoutAudience, 3, "the two in between and this one");
    assert.equal(entries()[1]?.level, 40, "a warning");
  });

  it("counts every token without aud it sees, warned of or not, in a counter without labels", async () => {
    const { log } = capturingLogger();
    const metrics = new GatewayMetrics({ processMetrics: false });
    const warnings = new AudienceLessTokens(log, metrics, () => 0);
    for (let i = 0; i < 3; i++) warnings.seen();
    const [family] = (await metrics.registry.getMetricsAsJSON()).filter(
      (m) => m.name === "ledger_gateway_tokens_without_audience_total",
    );
    assert.deepEqual(
      family?.values.map((v) => [v.labels, v.value]),
      [[{}, 3]],
    );
  });

  it("samples HTTP requests: the first token and one in 64 after it, audience-based ones never", () => {
    const { log, entries } = capturingLogger();
    let now = 0;
    const warnings = new AudienceLessTokens(log, undefined, () => now);
    for (let i = 0; i < 64; i++) warnings.sampleHttp(audienceBased);
    assert.equal(entries().length, 0);
    for (let i = 0; i < 64; i++) warnings.sampleHttp(scopeBased);
    assert.equal(entries().length, 1);
    now += 10 * 60_000;
    for (let i = 0; i < 128; i++) warnings.sampleHttp(scopeBased);
    assert.equal(entries().length, 2, "the first looked at warns, the next is within the interval");
    now += 10 * 60_000;
    warnings.sampleHttp(audienceBased);
    for (let i = 0; i < 63; i++) warnings.sampleHttp(scopeBased);
    assert.equal(entries().length, 2, "an audience-based token looked at does not count");
    warnings.sampleHttp(scopeBased);
    assert.equal(entries()[2]?.tokensWithoutAudience, 2, "the one held back and this one");
    const text = JSON.stringify(entries());
    assert.ok(!text.includes(scopeBased) && !text.includes("scope-user"), "neither token nor subject logged");
  });
});
