import { deepStrictEqual, equal, match } from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/*
 * The import rules of .dependency-cruiser.cjs, run the way `npm run depcheck` runs them (the CLI,
 * the real config) on two small trees laid out like src/: one that breaks every rule once, one
 * that keeps them all. A rule that stops firing, or fires on a legal import, fails here.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const config = join(root, ".dependency-cruiser.cjs");
const fixtures = join(root, "test", "fixtures", "architecture");
const depcruise = join(root, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");
const ruleNames = (createRequire(import.meta.url)(config) as { forbidden: { name: string }[] }).forbidden.map(
  (rule) => rule.name,
);

interface Violation {
  rule: string;
  from: string;
  to: string;
}

interface CruiseRun {
  violations: Violation[];
  modules: number;
}

function cruise(fixture: string): CruiseRun {
  const run = spawnSync(process.execPath, [depcruise, "src", "--config", config, "--output-type", "json"], {
    cwd: join(fixtures, fixture),
    encoding: "utf8",
  });
  if (run.stdout === "") throw new Error(`depcruise printed nothing: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[]; totalCruised: number };
  };
  const violations = result.summary.violations
    .map(({ rule, from, to }) => ({ rule: rule.name, from, to: to.replace(/^(\.\.\/)+/, "") }))
    .sort((a, b) => `${a.rule} ${a.from}`.localeCompare(`${b.rule} ${b.from}`));
  return { violations, modules: result.summary.totalCruised };
}

describe("dependency rules", () => {
  it("reports each rule, by name, on the import that breaks it", () => {
    const run = cruise("violations");
    const expected: Violation[] = [
      { rule: "cli-loads-the-sandbox-lazily", from: "src/cli.ts", to: "src/sandbox/sandbox-worker.ts" },
      { rule: "cli-starts-only-the-sandbox-worker", from: "src/cli.ts", to: "src/sandbox/store.ts" },
      {
        rule: "codec-imports-only-lf-proto-config",
        from: "src/codec/ledger-json.ts",
        to: "src/ledger/client.ts",
      },
      {
        rule: "codec-only-through-its-index",
        from: "src/endpoints/route.ts",
        to: "src/codec/text-writer.ts",
      },
      {
        rule: "config-imports-only-jwt",
        from: "src/config/load-config.ts",
        to: "src/auth/gateway-auth.ts",
      },
      {
        rule: "errors-imports-only-the-core",
        from: "src/errors/error-mapping.ts",
        to: "src/streams/element-limit.ts",
      },
      {
        rule: "errors-only-through-its-index",
        from: "src/endpoints/request-bounds.ts",
        to: "src/errors/gateway-errors.ts",
      },
      {
        rule: "fanout-imports-nothing-of-src",
        from: "src/fanout/shared-stream.ts",
        to: "src/ledger/client.ts",
      },
      {
        rule: "gateway-never-imports-sandbox",
        from: "src/endpoints/route.ts",
        to: "src/sandbox/sandbox-worker.ts",
      },
      {
        rule: "generated-types-only-through-ledger-api-types",
        from: "src/codec/text-writer.ts",
        to: "src/proto/generated/value.ts",
      },
      { rule: "jwt-is-a-leaf", from: "src/jwt/token-verifier.ts", to: "src/config/load-config.ts" },
      {
        rule: "ledger-imports-only-the-core",
        from: "src/ledger/server-stream.ts",
        to: "src/streams/element-limit.ts",
      },
      { rule: "lf-imports-only-proto", from: "src/lf/value-codec.ts", to: "src/codec/index.ts" },
      { rule: "lf-only-through-its-index", from: "src/endpoints/request-bounds.ts", to: "src/lf/archive.ts" },
      {
        rule: "limits-imports-nothing-of-src",
        from: "src/limits/shared-quotas.ts",
        to: "src/config/load-config.ts",
      },
      // A cycle is reported once, from the module where depcruise entered it.
      { rule: "no-circular", from: "src/ledger/call-queue.ts", to: "src/ledger/retry-policy.ts" },
      { rule: "no-unresolvable-imports", from: "src/docs/openapi-document.ts", to: "./missing.js" },
      { rule: "only-cli-imports-gateway", from: "src/endpoints/route.ts", to: "src/gateway.ts" },
      {
        rule: "only-otel-tracing-imports-opentelemetry",
        from: "src/tracing/tracing.ts",
        to: "node_modules/@opentelemetry/api/build/src/index.d.ts",
      },
      {
        rule: "only-the-top-imports-transports",
        from: "src/auth/gateway-auth.ts",
        to: "src/http/list-twin.ts",
      },
      { rule: "proto-is-a-leaf", from: "src/proto/ledger-api-protos.ts", to: "src/lf/index.ts" },
      {
        rule: "sandbox-imports-only-lf-proto-jwt-threads",
        from: "src/sandbox/store.ts",
        to: "src/codec/index.ts",
      },
      {
        rule: "src-uses-no-dev-dependencies",
        from: "src/metrics/gateway-metrics.ts",
        to: "node_modules/typescript/lib/typescript.js",
      },
      {
        rule: "streams-imports-only-errors",
        from: "src/streams/idle-timeout.ts",
        to: "src/ledger/client.ts",
      },
      {
        rule: "threads-is-a-leaf",
        from: "src/threads/module-worker.ts",
        to: "src/config/load-config.ts",
      },
      {
        rule: "tracing-sdk-loaded-lazily",
        from: "src/tracing/start-tracing.ts",
        to: "src/tracing/otel-tracing.ts",
      },
      {
        rule: "transports-never-import-each-other",
        from: "src/http/list-twin.ts",
        to: "src/ws/socket-sink.ts",
      },
    ];
    deepStrictEqual(run.violations, expected);
  });

  it("fails the command that npm run depcheck runs, naming the rule", () => {
    // The default (err) reporter is the one whose exit code counts the errors.
    const run = spawnSync(process.execPath, [depcruise, "src", "--config", config], {
      cwd: join(fixtures, "violations"),
      encoding: "utf8",
    });
    equal(run.status, ruleNames.length);
    match(
      run.stdout,
      /error no-circular: src\/ledger\/call-queue\.ts → \n\s+src\/ledger\/retry-policy\.ts →/,
    );
  });

  it("proves every rule of the config with the violations fixture", () => {
    const fired = new Set(cruise("violations").violations.map((v) => v.rule));
    deepStrictEqual(
      ruleNames.filter((name) => !fired.has(name)),
      [],
    );
  });

  it("passes a tree that keeps the layers, including the lazy loads of the sandbox worker and the tracing SDK", () => {
    const run = cruise("clean");
    deepStrictEqual(run.violations, []);
    equal(run.modules, 27);
  });
});
