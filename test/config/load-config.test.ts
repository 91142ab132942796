import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { describe, it } from "node:test";
import { ConfigError, defaultWorkers, loadConfig, parseDuration } from "../../src/config/load-config.js";

const files = (content: Record<string, string>) => (path: string) => {
  const text = content[path];
  if (text === undefined) throw new Error("no such file");
  return text;
};

describe("loadConfig", () => {
  it("uses Canton's defaults when nothing is set", () => {
    const config = loadConfig({ argv: [], env: {} });
    assert.deepEqual(config.server, {
      address: "127.0.0.1",
      port: 7575,
      pathPrefix: "",
      requestTimeoutMs: 20_000,
      drainDelayMs: 5_000,
      bodyReadTimeoutMs: 60_000,
      maxBodyBytes: 64 * 1024 * 1024,
      workers: defaultWorkers(availableParallelism()),
      httpCompression: { minBytes: 4096 },
      streamTicketTtlMs: 30_000,
      cors: undefined,
    });
    assert.deepEqual(config.websocket, {
      httpListMaxElementsLimit: 1024,
      httpListWaitTimeMs: 1000,
      highWaterMark: 1024 * 1024,
      lowWaterMark: 256 * 1024,
      hardLimit: 16 * 1024 * 1024,
      writeDeadlineMs: 60_000,
      maxQueryFrameBytes: 1024 * 1024,
      queryFrameTimeoutMs: 30_000,
      upgradesPerSecond: 1000,
      upgradeMaxWaitMs: 30_000,
      pingIntervalMs: 13_000,
      streamAuthorizationRecheckMs: 5_000,
      resumeWindowMs: 30_000,
      tokenRenewalsPerMinute: 6,
      fanoutHistoryBytes: 1024 * 1024,
      compression: "off",
    });
    assert.deepEqual(config.ledger, { kind: "embedded", sandboxPort: 0, apiVersion: "3.5.10" });
    assert.deepEqual(config.ledgerConnection, {
      maxMetadataBytes: 8192,
      keepaliveIntervalMs: 15_000,
      keepaliveTimeoutMs: 10_000,
    });
    assert.deepEqual(config.sandboxAuth, { mode: "unsafe", maxTokenLifetimeMs: 300_000 });
  });

  it("reads the ledger connection's header limit and keepalive, and refuses a 0s keepalive", () => {
    const readFile = files({
      "gw.yaml": "ledger:\n  keepalive-interval: 30s\n  max-metadata-bytes: 10240\n",
    });
    assert.deepEqual(
      loadConfig({ argv: ["--config", "gw.yaml", "--ledger.keepalive-timeout", "20s"], env: {}, readFile })
        .ledgerConnection,
      { maxMetadataBytes: 10_240, keepaliveIntervalMs: 30_000, keepaliveTimeoutMs: 20_000 },
    );
    assert.throws(
      () => loadConfig({ argv: ["--ledger.keepalive-interval", "0s"], env: {} }),
      (error: Error) =>
        error instanceof ConfigError &&
        error.message === "ledger.keepalive-interval must be longer than 0s, not 0s",
    );
  });

  it("reads websocket-config.upgrade-max-wait past uWS's 10 s for an unanswered request: the socket waits upgraded", () => {
    const wait = (...argv: string[]) => loadConfig({ argv, env: {} }).websocket.upgradeMaxWaitMs;
    assert.equal(wait(), 30_000);
    assert.equal(wait("--websocket-config.upgrade-max-wait", "2m"), 120_000);
    assert.equal(wait("--websocket-config.upgrade-max-wait", "0s"), 0);
  });

  it("reads websocket-config.fanout-history-bytes, and still accepts the deprecated fanout-history-elements (only its 0 counts)", () => {
    const bytes = (...argv: string[]) => loadConfig({ argv, env: {} }).websocket.fanoutHistoryBytes;
    assert.equal(bytes("--websocket-config.fanout-history-bytes", "65536"), 65_536);
    assert.equal(bytes("--websocket-config.fanout-history-bytes", "0"), 0);
    assert.equal(bytes("--websocket-config.fanout-history-elements", "0"), 0, "no history, as it meant");
    assert.equal(
      bytes("--websocket-config.fanout-history-elements", "20"),
      1024 * 1024,
      "a count is ignored",
    );
  });

  it("bounds request bodies by server.max-body-bytes, or by Canton 3.6's max-inbound-message-size where set", () => {
    const bound = (...argv: string[]) => loadConfig({ argv, env: {} }).server.maxBodyBytes;
    assert.equal(bound(), 64 * 1024 * 1024);
    assert.equal(bound("--server.max-body-bytes", "1000"), 1000);
    assert.equal(bound("--max-inbound-message-size", "2000"), 2000);
    assert.equal(bound("--server.max-body-bytes", "1000", "--max-inbound-message-size", "2000"), 2000);
    assert.equal(
      loadConfig({ argv: [], env: { LEDGER_GATEWAY_MAX_INBOUND_MESSAGE_SIZE: "3000" } }).server.maxBodyBytes,
      3000,
    );
  });

  it("reads server.drain-delay and sandbox.auth.max-token-lifetime, 0s included", () => {
    const config = loadConfig({
      argv: ["--server.drain-delay", "0s", "--sandbox.auth.max-token-lifetime", "20m"],
      env: {},
    });
    assert.equal(config.server.drainDelayMs, 0);
    assert.equal(config.sandboxAuth.maxTokenLifetimeMs, 1_200_000);
    const none = loadConfig({ argv: ["--sandbox.auth.max-token-lifetime", "0s"], env: {} });
    assert.equal(none.sandboxAuth.maxTokenLifetimeMs, 0);
    assert.throws(
      () => loadConfig({ argv: ["--server.drain-delay", "soon"], env: {} }),
      (error: Error) => error instanceof ConfigError && /server\.drain-delay/.test(error.message),
    );
  });

  it("reads server.cors.*: none by default, a list of origins, and refuses what is no origin", () => {
    assert.equal(loadConfig({ argv: [], env: {} }).server.cors, undefined);
    const config = loadConfig({
      argv: ["--server.cors.allowed-origins", " https://wallet.example,http://localhost:3000 ,"],
      env: { LEDGER_GATEWAY_SERVER_CORS_MAX_AGE: "1h" },
    });
    assert.deepEqual(config.server.cors, {
      allowedOrigins: ["https://wallet.example", "http://localhost:3000"],
      allowedMethods: "GET, POST, PUT, PATCH, DELETE",
      allowedHeaders: "Authorization, Content-Type, Last-Event-ID, traceparent, tracestate",
      exposedHeaders: "Canton-Package-Hash, Ledger-Package-Hash",
      maxAgeSeconds: 3600,
    });
    assert.throws(
      () => loadConfig({ argv: ["--server.cors.allowed-origins", "https://wallet.example/app"], env: {} }),
      (error: Error) =>
        error instanceof ConfigError && /'https:\/\/wallet\.example\/app' is no origin/.test(error.message),
    );
  });

  it("defaults server.workers to half the cores, 1 to 4", () => {
    const chosen = [1, 2, 3, 4, 5, 8, 9, 16, 64].map((cores) => [cores, defaultWorkers(cores)]);
    assert.deepEqual(chosen, [
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 2],
      [5, 2],
      [8, 4],
      [9, 4],
      [16, 4],
      [64, 4],
    ]);
  });

  it("reads server.workers from the file, LEDGER_GATEWAY_SERVER_WORKERS and --server.workers", () => {
    const readFile = files({ "gw.yaml": "server:\n  workers: 3\n" });
    assert.equal(loadConfig({ argv: ["--config", "gw.yaml"], env: {}, readFile }).server.workers, 3);
    assert.equal(loadConfig({ argv: [], env: { LEDGER_GATEWAY_SERVER_WORKERS: "1" } }).server.workers, 1);
    assert.equal(
      loadConfig({ argv: ["--server.workers", "4"], env: { LEDGER_GATEWAY_SERVER_WORKERS: "1" } }).server
        .workers,
      4,
    );
    assert.throws(
      () => loadConfig({ argv: ["--server.workers", "0"], env: {} }),
      (error: Error) =>
        error instanceof ConfigError &&
        error.message ===
          'bad value "0" for server.workers in flag --server.workers: expected an integer from 1 to 1024',
    );
  });

  it("reads the caps per user and per address (limits.*): all off by default, 0 refused below", () => {
    assert.deepEqual(loadConfig({ argv: [], env: {} }).quotas, {
      wsConnectionsPerUser: 0,
      wsConnectionsPerAddress: 0,
      streamsPerUser: 0,
      httpInFlightPerUser: 0,
      commandsPerSecondPerUser: 0,
      commandsBurstPerUser: 0,
    });
    const config = loadConfig({
      argv: ["--config", "g.yaml", "--limits.streams-per-user", "7"],
      env: { LEDGER_GATEWAY_LIMITS_COMMANDS_PER_SECOND_PER_USER: "20" },
      readFile: files({
        "g.yaml":
          "limits:\n  ws-connections-per-user: 3\n  ws-connections-per-address: 100\n  http-in-flight-per-user: 5\n  commands-burst-per-user: 40\n",
      }),
    });
    assert.deepEqual(config.quotas, {
      wsConnectionsPerUser: 3,
      wsConnectionsPerAddress: 100,
      streamsPerUser: 7,
      httpInFlightPerUser: 5,
      commandsPerSecondPerUser: 20,
      commandsBurstPerUser: 40,
    });
    assert.throws(
      () => loadConfig({ argv: ["--limits.streams-per-user", "-1"], env: {} }),
      /bad value "-1" for limits.streams-per-user in flag --limits.streams-per-user: expected an integer from 0/,
    );
  });

  it("reads nested and dotted keys from a YAML file", () => {
    const readFile = files({
      "gw.yaml": "server:\n  port: 8000\n  path-prefix: api/\nwebsocket-config.http-list-wait-time: 250ms\n",
    });
    const config = loadConfig({ argv: ["--config", "gw.yaml"], env: {}, readFile });
    assert.equal(config.server.port, 8000);
    assert.equal(config.server.pathPrefix, "/api");
    assert.equal(config.websocket.httpListWaitTimeMs, 250);
  });

  it("reads JSON files too", () => {
    const readFile = files({
      "gw.json": '{"ledger": {"target": "ledger.local:6865", "tls": {"enabled": true}}}',
    });
    const config = loadConfig({ argv: ["--config", "gw.json"], env: {}, readFile });
    assert.deepEqual(config.ledger, { kind: "remote", host: "ledger.local", port: 6865, tls: {} });
  });

  it("lets env override the file and flags override env", () => {
    const readFile = files({ "gw.yaml": "server:\n  port: 8000\n  address: 0.0.0.0\n" });
    const env = { LEDGER_GATEWAY_SERVER_PORT: "8001", LEDGER_GATEWAY_SERVER_ADDRESS: "127.0.0.2" };
    const config = loadConfig({ argv: ["--config", "gw.yaml", "--port=8002"], env, readFile });
    assert.equal(config.server.port, 8002);
    assert.equal(config.server.address, "127.0.0.2");
  });

  it("accepts --ledger HOST:PORT and any key as a flag", () => {
    const config = loadConfig({
      argv: ["--ledger", "[::1]:6865", "--websocket-config.http-list-max-elements-limit", "10"],
      env: {},
    });
    assert.deepEqual(config.ledger, { kind: "remote", host: "[::1]", port: 6865 });
    assert.equal(config.websocket.httpListMaxElementsLimit, 10);
  });

  it("rejects unknown keys, naming the source", () => {
    assert.throws(
      () => loadConfig({ argv: ["--prot", "1"], env: {} }),
      /unknown configuration key 'prot' in flag --prot/,
    );
    assert.throws(
      () => loadConfig({ argv: [], env: { LEDGER_GATEWAY_SERVER_PROT: "1" } }),
      /unknown environment variable LEDGER_GATEWAY_SERVER_PROT/,
    );
    const readFile = files({ "gw.yaml": "server:\n  prot: 1\n" });
    assert.throws(
      () => loadConfig({ argv: ["--config", "gw.yaml"], env: {}, readFile }),
      /'server.prot' in config file gw.yaml/,
    );
  });

  it("names the nearest valid key of a mistyped flag, env var or file key", () => {
    const message = (sources: { argv?: string[]; env?: Record<string, string>; file?: string }) => {
      try {
        loadConfig({
          argv: [...(sources.file ? ["--config", "gw.yaml"] : []), ...(sources.argv ?? [])],
          env: sources.env ?? {},
          readFile: files({ "gw.yaml": sources.file ?? "" }),
        });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      assert.fail("accepted");
    };
    // The short flag --port is server.port: its env name is the key's, not the flag's.
    assert.match(
      message({ env: { LEDGER_GATEWAY_PORT: "8000" } }),
      /LEDGER_GATEWAY_PORT; did you mean LEDGER_GATEWAY_SERVER_PORT\?$/,
    );
    assert.match(
      message({ env: { LEDGER_GATEWAY_SERVER_PROT: "1" } }),
      /did you mean LEDGER_GATEWAY_SERVER_PORT\?$/,
    );
    assert.match(
      message({ env: { LEDGER_GATEWAY_HIGH_WATER_MARK: "1" } }),
      /did you mean LEDGER_GATEWAY_WEBSOCKET_CONFIG_HIGH_WATER_MARK\?$/,
    );
    assert.match(message({ argv: ["--prot", "1"] }), /did you mean --port\?$/);
    assert.match(message({ argv: ["--confg", "x"] }), /did you mean --config\?$/);
    assert.match(
      message({ argv: ["--ledger.tls.enable", "true"] }),
      /did you mean --ledger\.tls\.enabled\?$/,
    );
    assert.match(
      message({ argv: ["--high-water-mark", "1"] }),
      /did you mean --websocket-config\.high-water-mark\?$/,
    );
    assert.match(message({ file: "server:\n  prot: 1\n" }), /'server.prot' .*did you mean server\.port\?$/);
    assert.match(message({ file: "auth:\n  mod: none\n" }), /did you mean auth\.mode\?$/);
    // A last segment alone fits several keys: all of them, not a guess.
    assert.match(message({ file: "mode: none\n" }), /did you mean auth\.mode or sandbox\.auth\.mode\?$/);
    // Nothing near: the known names instead of a wild guess.
    assert.match(
      message({ argv: ["--colour", "blue"] }),
      /'colour' in flag --colour; known keys: server\.address/,
    );
    assert.match(
      message({ env: { LEDGER_GATEWAY_FOO: "1" } }),
      /LEDGER_GATEWAY_FOO; see --help for the LEDGER_GATEWAY_\* names$/,
    );
  });

  it("rejects bad values with what was expected", () => {
    assert.throws(
      () => loadConfig({ argv: ["--port", "70000"], env: {} }),
      /expected an integer from 0 to 65535/,
    );
    assert.throws(
      () => loadConfig({ argv: ["--ledger", "nowhere"], env: {} }),
      /expected `embedded` or HOST:PORT/,
    );
    assert.throws(
      () => loadConfig({ argv: ["--websocket-config.http-list-wait-time", "soon"], env: {} }),
      /expected a duration/,
    );
    assert.throws(() => loadConfig({ argv: ["--port"], env: {} }), /flag --port needs a value/);
    assert.throws(
      () => loadConfig({ argv: ["--config", "missing.yaml"], env: {}, readFile: files({}) }),
      ConfigError,
    );
  });

  it("parses Canton-style durations", () => {
    assert.equal(parseDuration("1s"), 1000);
    assert.equal(parseDuration("500ms"), 500);
    assert.equal(parseDuration("2 minutes"), 120_000);
    assert.equal(parseDuration("1.5s"), 1500);
    assert.equal(parseDuration("fast"), undefined);
  });
});
