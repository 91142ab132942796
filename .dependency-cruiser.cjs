/**
 * The import rules of DESIGN.md ("Layers and import rules"), checked by `npm run depcheck`.
 * docs/architecture.md draws the layers these rules keep apart; test/architecture proves that
 * each rule fires. Paths are relative to the directory depcruise runs in (the repository root).
 *
 * Layers, bottom up (a folder may import its own files and those listed for it):
 *   config -> jwt, proto/api-version | proto, jwt: nothing | lf -> proto | codec -> lf, proto, config
 *   errors -> codec, lf, proto, config | ledger -> errors, codec, lf, proto, config
 *   streams -> errors | fanout, limits: nothing
 *   endpoints, auth, metrics, docs: anything below the transports
 *   http, ws: anything but each other | gateway.ts, then workers (its threads), cli.ts on top
 *   sandbox -> lf, proto, jwt
 *   tracing: beside metrics; its OpenTelemetry module loaded lazily and alone in importing the SDK
 */

/** The folders of src/ a layer may import besides itself, as one regular expression. */
const only = (...folders) => `^src/(?!(${folders.join("|")})/)`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "A cycle makes load order matter and the layers meaningless. Type-only imports count. The " +
        "generated proto types are exempt: recursive messages (Value <-> Record) are type cycles by nature.",
      from: { pathNot: "^src/proto/generated/" },
      to: { circular: true },
    },

    // The sandbox is a separate participant that happens to live in this repository.
    {
      name: "sandbox-imports-only-lf-proto-jwt-threads",
      severity: "error",
      comment:
        "The sandbox speaks gRPC only; it shares the pure lf and proto modules, src/jwt so that " +
        "both sides accept and reject exactly the same tokens, and src/threads (how a module runs " +
        "itself in a worker thread).",
      from: { path: "^src/sandbox/" },
      to: { path: "^src/", pathNot: "^src/(sandbox|lf|proto|jwt|threads)/" },
    },
    {
      name: "gateway-never-imports-sandbox",
      severity: "error",
      comment:
        "The gateway never knows whether it talks to the sandbox or to Canton. Only cli.ts starts " +
        "the embedded sandbox (see the two cli-* rules).",
      from: { path: "^src/", pathNot: ["^src/sandbox/", "^src/cli\\.ts$"] },
      to: { path: "^src/sandbox/" },
    },
    {
      name: "cli-starts-only-the-sandbox-worker",
      severity: "error",
      comment: "cli.ts may reach the sandbox through its worker entry point only.",
      from: { path: "^src/cli\\.ts$" },
      to: { path: "^src/sandbox/", pathNot: "^src/sandbox/sandbox-worker\\.ts$" },
    },
    {
      name: "cli-loads-the-sandbox-lazily",
      severity: "error",
      comment:
        "A dynamic import, so that a gateway in front of a real participant never loads the sandbox.",
      from: { path: "^src/cli\\.ts$" },
      to: { path: "^src/sandbox/", dependencyTypesNot: ["dynamic-import"] },
    },

    // Span export costs nothing unless it is asked for.
    {
      name: "tracing-sdk-loaded-lazily",
      severity: "error",
      comment:
        "A dynamic import, so that a gateway started without OTEL_TRACES_EXPORTER never loads the " +
        "OpenTelemetry SDK (src/tracing/start-tracing.ts decides).",
      from: { path: "^src/" },
      to: { path: "^src/tracing/otel-tracing\\.ts$", dependencyTypesNot: ["dynamic-import"] },
    },
    {
      name: "only-otel-tracing-imports-opentelemetry",
      severity: "error",
      comment:
        "The OpenTelemetry API and SDK stay in src/tracing/otel-tracing.ts: the rest of the gateway " +
        "speaks TraceContext and the Tracing interface.",
      from: { path: "^src/", pathNot: "^src/tracing/otel-tracing\\.ts$" },
      to: { path: "node_modules/@opentelemetry/" },
    },

    // Transports and what is beneath them.
    {
      name: "transports-never-import-each-other",
      severity: "error",
      comment: "http and ws are sibling sinks; what they share lives in endpoints or errors.",
      from: { path: "^src/(http|ws)/" },
      to: { path: "^src/(http|ws)/", pathNot: "^src/$1/" },
    },
    {
      name: "only-the-top-imports-transports",
      severity: "error",
      comment:
        "Everything below http and ws (endpoints, errors, auth, metrics, docs, the core) is an input " +
        "to them; only gateway.ts wires them.",
      from: { path: "^src/", pathNot: ["^src/(http|ws)/", "^src/gateway\\.ts$"] },
      to: { path: "^src/(http|ws)/" },
    },
    {
      name: "only-cli-imports-gateway",
      severity: "error",
      comment:
        "gateway.ts and cli.ts are the top; nothing in src builds on them but the worker threads " +
        "(src/workers), each of which runs a whole gateway.",
      from: { path: "^src/", pathNot: ["^src/cli\\.ts$", "^src/workers/"] },
      to: { path: "^src/(gateway|cli)\\.ts$" },
    },

    // The core, bottom up.
    {
      name: "config-imports-only-jwt",
      severity: "error",
      comment:
        "The typed config is the bottom: every layer reads it, it reads none (jwt's file options and the known Canton releases, a leaf of constants, aside).",
      from: { path: "^src/config/" },
      to: { path: only("config", "jwt"), pathNot: "^src/proto/api-version\\.ts$" },
    },
    {
      name: "proto-is-a-leaf",
      severity: "error",
      from: { path: "^src/proto/" },
      to: { path: only("proto") },
    },
    {
      name: "jwt-is-a-leaf",
      severity: "error",
      comment: "Shared with the sandbox: it must not pull gateway code in.",
      from: { path: "^src/jwt/" },
      to: { path: only("jwt") },
    },
    {
      name: "threads-is-a-leaf",
      severity: "error",
      comment: "Shared with the sandbox: it must not pull gateway code in.",
      from: { path: "^src/threads/" },
      to: { path: only("threads") },
    },
    {
      name: "limits-imports-nothing-of-src",
      severity: "error",
      comment:
        "The quota tables live in memory every worker thread shares; what they count is the " +
        "callers' business, so they know no config, transport or metric.",
      from: { path: "^src/limits/" },
      to: { path: only("limits") },
    },
    {
      name: "lf-imports-only-proto",
      severity: "error",
      from: { path: "^src/lf/" },
      to: { path: only("lf", "proto") },
    },
    {
      name: "codec-imports-only-lf-proto-config",
      severity: "error",
      comment: "The codec turns messages into JSON; it knows nothing of calls, streams or endpoints.",
      from: { path: "^src/codec/" },
      to: { path: only("codec", "lf", "proto", "config") },
    },
    {
      name: "errors-imports-only-the-core",
      severity: "error",
      comment: "The one error module maps what the layers below throw; it builds no requests.",
      from: { path: "^src/errors/" },
      to: { path: only("errors", "codec", "lf", "proto", "config") },
    },
    {
      name: "ledger-imports-only-the-core",
      severity: "error",
      comment: "The gRPC client is transport-neutral: no streams policy, endpoints or transports.",
      from: { path: "^src/ledger/" },
      to: { path: only("ledger", "errors", "codec", "lf", "proto", "config") },
    },
    {
      name: "streams-imports-only-errors",
      severity: "error",
      comment: "Pure RxJS operators (marble-tested, no I/O); their typed errors live in errors.",
      from: { path: "^src/streams/" },
      to: { path: only("streams", "errors") },
    },

    {
      name: "fanout-imports-nothing-of-src",
      severity: "error",
      comment:
        "The shared streams are transport-neutral and endpoint-neutral (keys, members, splice by " +
        "offset): endpoints compute their share specs, ws and metrics use them; they import none of those.",
      from: { path: "^src/fanout/" },
      to: { path: only("fanout") },
    },

    // Public faces.
    {
      name: "codec-only-through-its-index",
      severity: "error",
      comment: "One codec with one public face: src/codec/index.ts.",
      from: { pathNot: "^src/codec/" },
      to: { path: "^src/codec/", pathNot: "^src/codec/index\\.ts$" },
    },
    {
      name: "errors-only-through-its-index",
      severity: "error",
      comment: "Every error body is built in src/errors (gatewayError stays inside); others use src/errors/index.ts.",
      from: { pathNot: "^src/errors/" },
      to: { path: "^src/errors/", pathNot: "^src/errors/index\\.ts$" },
    },
    {
      name: "lf-only-through-its-index",
      severity: "error",
      comment: "Daml-LF has one public face: src/lf/index.ts.",
      from: { pathNot: "^src/lf/" },
      to: { path: "^src/lf/", pathNot: "^src/lf/index\\.ts$" },
    },
    {
      name: "generated-types-only-through-ledger-api-types",
      severity: "error",
      comment: "src/proto/generated is build output; src/proto/ledger-api-types.ts is its one barrel.",
      from: { pathNot: ["^src/proto/generated/", "^src/proto/ledger-api-types\\.ts$"] },
      to: { path: "^src/proto/generated/" },
    },

    // Packages.
    {
      name: "src-uses-no-dev-dependencies",
      severity: "error",
      comment: "The installed CLI has only the dependencies of package.json.",
      from: { path: "^src/" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "no-unresolvable-imports",
      severity: "error",
      comment: "An import that resolves to nothing would hide a dependency from every rule above.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports are dependencies too: they shape the layers as much as value imports.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: require("node:path").join(__dirname, "tsconfig.json") },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
