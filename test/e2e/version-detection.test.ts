import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { pino } from "pino";
import { parse } from "yaml";
import { loadConfig } from "../../src/config/load-config.js";
import { type RunningGateway, startGateway } from "../../src/gateway.js";
import { type ApiVersion, KNOWN_API_VERSIONS } from "../../src/proto/api-version.js";
import { type RunningSandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/sandbox.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { gatewayMetric } from "../support/gateway-metric.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";

/**
 * How the gateway learns the participant's release (GetLedgerApiVersion, at start and on every
 * new connection) and which it then serves: the participant's own, the nearest known one to a
 * release it does not know (with a warning and the metric saying both), or the one
 * ledger.api-version pins. Against sandboxes reporting each release.
 */
interface Running {
  gateway: RunningGateway;
  url: string;
  sandbox: RunningSandbox | undefined;
  warnings: () => string[];
  stop(): Promise<void>;
}

async function gatewayBefore(
  sandboxOptions: Omit<SandboxOptions, "port"> | undefined,
  args: string[] = [],
  port = 0,
): Promise<Running> {
  const sandbox = sandboxOptions === undefined ? undefined : await startSandbox({ ...sandboxOptions, port });
  const logs = capturingLogger();
  const gateway = await startGateway(
    loadConfig({ argv: ["--port", "0", ...args], env: {} }),
    { host: "127.0.0.1", port: sandbox?.port ?? port },
    logs.log,
  );
  return {
    gateway,
    url: `http://127.0.0.1:${gateway.port}`,
    sandbox,
    warnings: () =>
      logs
        .entries()
        .filter((e) => e.level === 40)
        .map((e) => String(e.msg)),
    async stop() {
      await gateway.stop(500);
      await sandbox?.stop();
    },
  };
}

const token = tokenFor();
const get = (url: string, path: string) =>
  fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });

/** The release /docs/openapi describes: whether it lists the paths only some releases have. */
async function documented(url: string): Promise<{ completions: boolean; flats: boolean }> {
  const document = parse(await (await fetch(`${url}/docs/openapi`)).text()) as {
    paths: Record<string, unknown>;
  };
  return {
    completions: "/v2/commands/command-completions" in document.paths,
    flats: "/v2/updates/flats" in document.paths,
  };
}

const EXPECTED_PATHS: Record<ApiVersion, { completions: boolean; flats: boolean }> = {
  "3.5.4": { completions: false, flats: true },
  "3.5.10": { completions: true, flats: true },
  "3.6.0": { completions: true, flats: false },
};

/** Served and reported as the metric says them: the one series at 1. */
async function versionMetric(url: string, served: string, reported: string): Promise<number> {
  return gatewayMetric(
    url,
    "ledger_gateway_ledger_api_version_info",
    `served="${served}"`,
    `reported="${reported}"`,
  );
}

/** A port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("the participant's release decides the API served", () => {
  for (const version of KNOWN_API_VERSIONS) {
    it(`serves ${version}'s operations in front of a participant that reports ${version}`, async () => {
      const running = await gatewayBefore({ apiVersion: version });
      try {
        assert.deepEqual(await documented(running.url), EXPECTED_PATHS[version]);
        assert.equal(await versionMetric(running.url, version, version), 1);
        assert.deepEqual(running.warnings(), []);
        const res = await get(running.url, "/v2/version");
        assert.equal(((await res.json()) as { version: string }).version, version);
      } finally {
        await running.stop();
      }
    });
  }

  it("serves main's 3.6.0-SNAPSHOT as 3.6.0, without a warning", async () => {
    const running = await gatewayBefore({ apiVersion: "3.6.0", reportedVersion: "3.6.0-SNAPSHOT" });
    try {
      assert.deepEqual(await documented(running.url), EXPECTED_PATHS["3.6.0"]);
      assert.equal(await versionMetric(running.url, "3.6.0", "3.6.0-SNAPSHOT"), 1);
      assert.deepEqual(running.warnings(), []);
    } finally {
      await running.stop();
    }
  });

  for (const [reported, served] of [
    ["3.7.2", "3.6.0"],
    ["3.5.7", "3.5.4"],
  ] as const) {
    it(`serves an unknown release ${reported} as the nearest known older one, ${served}, with a warning and the metric`, async () => {
      const running = await gatewayBefore({ apiVersion: served, reportedVersion: reported });
      try {
        assert.deepEqual(await documented(running.url), EXPECTED_PATHS[served]);
        assert.equal(await versionMetric(running.url, served, reported), 1);
        const warnings = running.warnings();
        assert.equal(warnings.length, 1, JSON.stringify(warnings));
        assert.match(
          warnings[0] as string,
          new RegExp(`reports Canton "${reported}".*serving the nearest known one, ${served}`),
        );
        // The participant's own answer goes through as it is.
        const res = await get(running.url, "/v2/version");
        assert.equal(((await res.json()) as { version: string }).version, reported);
      } finally {
        await running.stop();
      }
    });
  }

  it("serves the release ledger.api-version pins, and warns when the participant reports another", async () => {
    const running = await gatewayBefore({ apiVersion: "3.6.0" }, ["--ledger.api-version", "3.5.10"]);
    try {
      assert.deepEqual(await documented(running.url), EXPECTED_PATHS["3.5.10"]);
      assert.equal(await versionMetric(running.url, "3.5.10", "3.6.0"), 1);
      assert.match(
        running.warnings().join("\n"),
        /ledger\.api-version pins Canton 3\.5\.10, but the participant reports "3\.6\.0"/,
      );
      const flats = await fetch(`${running.url}/v2/updates/flats`, { method: "POST", body: "{}" });
      assert.notEqual(flats.status, 404, "a pinned release's operation is served");
    } finally {
      await running.stop();
    }
  });

  it("answers an operation only some releases have 503 until an unreachable participant says its release, then serves it", async () => {
    const port = await freePort();
    const running = await gatewayBefore(undefined, [], port);
    let sandbox: RunningSandbox | undefined;
    try {
      const early = await fetch(`${running.url}/v2/commands/command-completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: "{}",
      });
      assert.equal(early.status, 503);
      assert.equal(((await early.json()) as { code: string }).code, "LEDGER_API_VERSION_UNKNOWN");
      assert.equal(await versionMetric(running.url, "unknown", ""), 1);
      sandbox = await startSandbox({ port, apiVersion: "3.6.0" });
      await until(async () => (await documented(running.url)).flats === false);
      assert.equal(await versionMetric(running.url, "3.6.0", "3.6.0"), 1);
      const removed = await fetch(`${running.url}/v2/updates/flats`, { method: "POST", body: "{}" });
      assert.equal(removed.status, 404);
    } finally {
      await running.stop();
      await sandbox?.stop();
    }
  });

  it("asks again after a reconnect, and serves the release of the participant it reconnected to", async () => {
    const first = await startSandbox({ port: 0, apiVersion: "3.5.10" });
    const port = first.port;
    const logs = pino({ level: "silent" });
    const gateway = await startGateway(
      loadConfig({ argv: ["--port", "0"], env: {} }),
      { host: "127.0.0.1", port },
      logs,
    );
    const url = `http://127.0.0.1:${gateway.port}`;
    let upgraded: RunningSandbox | undefined;
    try {
      assert.deepEqual(await documented(url), EXPECTED_PATHS["3.5.10"]);
      await first.stop();
      upgraded = await startSandbox({ port, apiVersion: "3.6.0" });
      // Any call reconnects; the new connection asks the release again.
      await until(async () => {
        await get(url, "/v2/state/ledger-end");
        return (await documented(url)).flats === false;
      });
      assert.deepEqual(await documented(url), EXPECTED_PATHS["3.6.0"]);
      const removed = await fetch(`${url}/v2/updates/flats`, { method: "POST", body: "{}" });
      assert.equal(removed.status, 404);
    } finally {
      await gateway.stop(500);
      await upgraded?.stop();
    }
  });
});
