import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { parse } from "yaml";
import { ledgerStreamEndpoints } from "../../src/endpoints/ledger-streams.js";
import type { RouteDeps } from "../../src/endpoints/route-deps.js";
import { probeRoutes } from "../../src/endpoints/routes/probe-routes.js";
import type { LedgerClient } from "../../src/ledger/ledger-client.js";
import { GatewayMetrics } from "../../src/metrics/gateway-metrics.js";
import { metricsRoute } from "../../src/metrics/metrics-route.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { exposedFamilies, HISTOGRAM_SUFFIX } from "../support/exposed-metrics.js";
import { debianBinary } from "./debian-package.js";

/**
 * deploy/prometheus: the alerting rules pass `promtool check rules`, their unit tests pass
 * `promtool test rules` (Debian's prometheus package, installed when missing and root), every
 * alert is tested firing and not firing, and the rules query only what the gateway exposes and
 * leave out the routes they say they leave out.
 */
const ROOT = projectRoot();
const DIR = join(ROOT, "deploy", "prometheus");
const RULES_FILE = "ledger-json-gateway.rules.yml";
const TESTS_FILE = "ledger-json-gateway.rules.test.yml";
const run = promisify(execFile);

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: AlertRule[];
}
interface ExpectedAlert {
  exp_labels?: Record<string, string>;
  exp_annotations?: Record<string, string>;
}
interface UnitTests {
  rule_files: string[];
  tests: { alert_rule_test?: { alertname: string; eval_time: string; exp_alerts?: ExpectedAlert[] }[] }[];
}

const groups = (parse(readFileSync(join(DIR, RULES_FILE), "utf8")) as { groups: RuleGroup[] }).groups;
const rules = groups.flatMap((g) => g.rules);
const unitTests = parse(readFileSync(join(DIR, TESTS_FILE), "utf8")) as UnitTests;
const rule = (name: string): AlertRule => {
  const found = rules.find((r) => r.alert === name);
  assert.ok(found, `no alert ${name}`);
  return found;
};
/** The alternatives of a rule's `route!~"..."` matchers, each one's set. */
const excludedRoutes = (expr: string): string[][] =>
  [...expr.matchAll(/route!~"([^"]*)"/g)].map((m) => (m[1] as string).split("|").sort());

/** Routes that are not the clients' traffic: the health probes and the Prometheus exposition. */
function probeAndMetricsRoutes(): string[] {
  const probes = probeRoutes({} as LedgerClient, () => false).map((r) => r.path);
  return [...probes, metricsRoute(new GatewayMetrics({ processMetrics: false })).path].sort();
}

const promtool = await debianBinary("promtool", "prometheus");
const skip = typeof promtool === "string" ? false : promtool.skip;

describe("Prometheus alerting rules (deploy/prometheus), with promtool", { skip }, () => {
  it("promtool check rules accepts every rule", async () => {
    const { stdout } = await run(promtool as string, ["check", "rules", RULES_FILE], { cwd: DIR }).catch(
      (error: { stdout: string; stderr: string }) => assert.fail(`${error.stdout}${error.stderr}`),
    );
    assert.match(stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  it("promtool test rules passes the unit tests", async () => {
    const { stdout } = await run(promtool as string, ["test", "rules", TESTS_FILE], { cwd: DIR }).catch(
      (error: { stdout: string; stderr: string }) => assert.fail(`${error.stdout}${error.stderr}`),
    );
    assert.match(stdout, /SUCCESS/);
  });

  it("grafana/prometheus.yml loads the rules for the job it scrapes", async () => {
    const config = join(ROOT, "grafana", "prometheus.yml");
    const { stdout } = await run(promtool as string, ["check", "config", config]).catch(
      (error: { stdout: string; stderr: string }) => assert.fail(`${error.stdout}${error.stderr}`),
    );
    assert.match(stdout, /SUCCESS: 1 rule files found/);
    assert.match(
      stdout,
      new RegExp(`${RULES_FILE.replace(/\./g, "\\.")}\\s+SUCCESS: ${rules.length} rules found`),
    );
  });
});

describe("Prometheus alerting rules (deploy/prometheus)", () => {
  it("tests every alert in a case where it fires, labels and annotations checked, and one where it must not", () => {
    assert.deepEqual(unitTests.rule_files, [RULES_FILE]);
    assert.ok(rules.length >= 10, "the rules file has alerts");
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const { alert, annotations } of rules) {
      const mine = cases.filter((c) => c.alertname === alert);
      const firing = mine.filter((c) => (c.exp_alerts ?? []).length > 0);
      assert.ok(firing.length > 0, `${alert} has no case where it fires`);
      assert.ok(
        mine.some((c) => (c.exp_alerts ?? []).length === 0),
        `${alert} has no case where it must not fire`,
      );
      for (const expected of firing.flatMap((c) => c.exp_alerts ?? [])) {
        assert.ok(expected.exp_labels?.severity, `${alert}: a firing case checks its labels`);
        assert.deepEqual(
          Object.keys(expected.exp_annotations ?? {}).sort(),
          Object.keys(annotations ?? {}).sort(),
          `${alert}: a firing case checks every annotation`,
        );
      }
    }
    const tested = new Set(cases.map((c) => c.alertname));
    for (const name of tested)
      assert.ok(
        rules.some((r) => r.alert === name),
        `${name} is tested but no rule`,
      );
  });

  it("selects the scrape job of grafana/prometheus.yml in every series it reads", () => {
    const config = parse(readFileSync(join(ROOT, "grafana", "prometheus.yml"), "utf8")) as {
      scrape_configs: { job_name: string }[];
    };
    const [{ job_name: job }] = config.scrape_configs as [{ job_name: string }];
    for (const { alert, expr } of rules) {
      const selectors = [...expr.matchAll(/\b(up|ledger_gateway_[a-z0-9_]+)(\{[^}]*\})?/g)];
      assert.ok(selectors.length > 0, alert);
      for (const [selector, , matchers] of selectors) {
        assert.ok(matchers?.includes(`job="${job}"`), `${alert}: ${selector} selects job="${job}"`);
      }
    }
  });

  it("gives every alert a severity, a summary, a description and a runbook", () => {
    const names = rules.map((r) => r.alert);
    assert.equal(new Set(names).size, names.length, "alert names are unique");
    for (const { alert, labels, annotations, for: pending } of rules) {
      assert.match(alert, /^LedgerGateway[A-Z]\w+$/);
      assert.ok(["warning", "critical"].includes(labels?.severity ?? ""), `${alert} severity`);
      assert.match(pending ?? "", /^\d+[smh]$/, `${alert} says how long its condition must hold`);
      assert.ok(annotations?.summary, `${alert} summary`);
      assert.ok(annotations?.description, `${alert} description`);
      for (const part of ["What it means", "What to check first", "What to do"]) {
        assert.ok(annotations?.runbook?.includes(part), `${alert} runbook: ${part}`);
      }
    }
  });

  it("queries only metrics the gateway exposes, the ledger, worker and stream ones included", async () => {
    const families = await exposedFamilies();
    const used = new Set(
      rules.flatMap((r) => [...r.expr.matchAll(/\bledger_gateway_[a-z0-9_]+/g)].map((m) => m[0])),
    );
    assert.ok(used.size >= 8, "the rules query the gateway's metrics");
    for (const name of used) {
      const family = families.has(name) ? name : name.replace(HISTOGRAM_SUFFIX, "");
      assert.ok(families.has(family), `${name} is not exposed by the gateway`);
    }
    for (const name of [
      "ledger_gateway_ledger_ready",
      "ledger_gateway_ledger_streams_open",
      "ledger_gateway_worker_up",
    ]) {
      assert.ok(used.has(name), `no rule watches ${name}`);
    }
  });

  it("leaves the list twins' whole-range reads, the probes and /metrics out of the p99 latency", () => {
    // Only the paths are read: no codec behind the endpoints.
    const deps = { protos: ledgerApiProtos(), json: {} } as unknown as RouteDeps;
    const streamPaths = ledgerStreamEndpoints(deps).map((e) => e.path);
    const expected = [...streamPaths, ...probeAndMetricsRoutes()].sort();
    const excluded = excludedRoutes(rule("LedgerGatewayHttpLatencyHigh").expr);
    assert.equal(excluded.length, 2, "the quantile and the request rate both leave them out");
    for (const routes of excluded) assert.deepEqual(routes, expected);
  });

  it("leaves the probes and /metrics out of the HTTP error ratio, on both of its sides", () => {
    const excluded = excludedRoutes(rule("LedgerGatewayHttpErrorsHigh").expr);
    assert.equal(excluded.length, 3, "errors, all requests and the request rate");
    for (const routes of excluded) assert.deepEqual(routes, probeAndMetricsRoutes());
  });

  it("writes the participant's stream budget once per rule, the same in each, and says it", () => {
    const budgetRules = rules.filter((r) => r.expr.includes("ledger_gateway_ledger_streams_open"));
    assert.deepEqual(
      budgetRules.map((r) => r.alert),
      ["LedgerGatewayLedgerStreamsNearBudget", "LedgerGatewayLedgerStreamsAtBudget"],
    );
    const budgets = budgetRules.map((r) => {
      const divisors = [...r.expr.matchAll(/\)\s*\/\s*(\d+)\s*>/g)].map((m) => m[1]);
      assert.equal(divisors.length, 1, `${r.alert} divides by one budget`);
      const budget = divisors[0] as string;
      assert.ok(r.annotations?.description?.includes(`the ${budget} streams`), `${r.alert} says its budget`);
      return budget;
    });
    assert.equal(new Set(budgets).size, 1, `one budget in both rules: ${budgets.join(", ")}`);
  });
});
