import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { pino } from "pino";
import { createTokenVerifier } from "../../../src/jwt/token-verifier.js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import { decodeStatusDetails, type StatusDetails } from "../../../src/proto/status-details.js";
import { permissiveAuthorizer } from "../../../src/sandbox/auth/authorization.js";
import { type RunningSandbox, type SandboxOptions, startSandbox } from "../../../src/sandbox/sandbox.js";
import { signToken } from "../../jwt/test-tokens.js";
import { waitFor } from "../../support/transport-harness.js";
import { bearer, rejection, SERVICES, serviceClient } from "../sandbox-client.js";

const SECRET = "token-lifetime-secret";
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;
const hs = (exp: number | null) => signToken("participant_admin", { key: SECRET, exp });
const UPDATES = "com.daml.ledger.api.v2.UpdateService";
const COMPLETIONS = "com.daml.ledger.api.v2.CommandCompletionService";

/** A sandbox whose log lines are kept, to read why it refused a token. */
async function sandboxWithLog(options: SandboxOptions): Promise<{ sandbox: RunningSandbox; log: string[] }> {
  const log: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      log.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const sandbox = await startSandbox({ port: 0, log: pino({ level: "info" }, sink), ...options });
  return { sandbox, log };
}

/** Whether GetLedgerApiVersion with `token` is served; the refusal's gRPC code otherwise. */
async function verdict(port: number, token: string): Promise<"served" | number> {
  const version = serviceClient(port, SERVICES.version);
  try {
    await version.GetLedgerApiVersion!({}, bearer(token));
    return "served";
  } catch (error) {
    return (error as grpc.ServiceError).code;
  } finally {
    version.close();
  }
}

describe("max-token-lifetime (Canton's JwtVerifier.checkTokenLifeTime)", () => {
  it("refuses a 10-minute token and a token without exp in HS256 mode by default, accepts a 5-minute one", async () => {
    const { sandbox, log } = await sandboxWithLog({ auth: { mode: "hs256", secret: SECRET } });
    try {
      strictEqual(await verdict(sandbox.port, hs(inSeconds(300))), "served");
      const tenMinutes = inSeconds(600);
      strictEqual(await verdict(sandbox.port, hs(tenMinutes)), grpc.status.UNAUTHENTICATED);
      strictEqual(await verdict(sandbox.port, hs(null)), grpc.status.UNAUTHENTICATED);
      const reasons = log.map((line) => JSON.parse(line) as { reason?: string }).map((e) => e.reason);
      const expiry = new Date(tenMinutes * 1000).toISOString().replace(".000Z", "Z");
      ok(reasons.includes(`Could not verify JWT token: token lifetime (${expiry}) too long`), log.join("\n"));
      ok(reasons.includes("Could not verify JWT token: token has no expiration time"), log.join("\n"));
    } finally {
      await sandbox.stop();
    }
  });

  it("answers the refusal as Canton does: UNAUTHENTICATED, redacted", async () => {
    const sandbox = await startSandbox({ port: 0, auth: { mode: "hs256", secret: SECRET } });
    const version = serviceClient(sandbox.port, SERVICES.version);
    try {
      const refused = await rejection(version.GetLedgerApiVersion!({}, bearer(hs(inSeconds(600)))));
      strictEqual(refused.code, grpc.status.UNAUTHENTICATED);
      match(refused.details, /^An error occurred\. Please contact the operator/);
    } finally {
      version.close();
      await sandbox.stop();
    }
  });

  it("takes a configured limit, and 0 as no limit", async () => {
    const twenty = await startSandbox({
      port: 0,
      auth: { mode: "hs256", secret: SECRET, maxTokenLifetimeMs: 20 * 60_000 },
    });
    const one = await startSandbox({
      port: 0,
      auth: { mode: "hs256", secret: SECRET, maxTokenLifetimeMs: 60_000 },
    });
    const none = await startSandbox({
      port: 0,
      auth: { mode: "hs256", secret: SECRET, maxTokenLifetimeMs: 0 },
    });
    try {
      strictEqual(await verdict(twenty.port, hs(inSeconds(600))), "served");
      strictEqual(await verdict(twenty.port, hs(inSeconds(1500))), grpc.status.UNAUTHENTICATED);
      strictEqual(await verdict(one.port, hs(inSeconds(120))), grpc.status.UNAUTHENTICATED);
      strictEqual(await verdict(one.port, hs(inSeconds(50))), "served");
      strictEqual(await verdict(none.port, hs(inSeconds(86_400))), "served");
      strictEqual(await verdict(none.port, hs(null)), "served");
    } finally {
      await Promise.all([twenty.stop(), one.stop(), none.stop()]);
    }
  });

  it("leaves the unsafe development mode without a limit: any lifetime, no exp", async () => {
    const sandbox = await startSandbox({ port: 0 });
    try {
      strictEqual(
        await verdict(sandbox.port, signToken("participant_admin", { exp: inSeconds(86_400) })),
        "served",
      );
      strictEqual(await verdict(sandbox.port, signToken("participant_admin", { exp: null })), "served");
    } finally {
      await sandbox.stop();
    }
  });
});

/** A server stream as a client sees it: its messages, then how it ended. */
interface OpenStream {
  readonly messages: unknown[];
  readonly call: grpc.ClientReadableStream<unknown>;
  /** The end: undefined for a clean end, else the error with its Canton details. */
  readonly ended: Promise<(grpc.ServiceError & { status: StatusDetails | undefined }) | undefined>;
  close(): void;
}

function openStream(
  port: number,
  service: string,
  method: string,
  request: object,
  token: string,
): OpenStream {
  const Client = ledgerApiProtos().client(service);
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const start = (client as unknown as Record<string, (r: object, m: grpc.Metadata) => unknown>)[method]!;
  const call = start.call(client, request, bearer(token)) as grpc.ClientReadableStream<unknown>;
  const messages: unknown[] = [];
  call.on("data", (message) => messages.push(message));
  const ended = new Promise<(grpc.ServiceError & { status: StatusDetails | undefined }) | undefined>(
    (resolve) => {
      call.on("error", (error: grpc.ServiceError) =>
        resolve(Object.assign(error, { status: decodeStatusDetails(error.metadata) })),
      );
      call.on("end", () => resolve(undefined));
    },
  );
  return {
    messages,
    call,
    ended,
    close() {
      call.cancel();
      client.close();
    },
  };
}

const javaInstant = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/** Asserts Canton's ACCESS_TOKEN_EXPIRED for a token valid until `exp` (epoch seconds). */
function assertAccessTokenExpired(error: Awaited<OpenStream["ended"]>, exp: number): void {
  ok(error !== undefined, "the stream ended without an error");
  strictEqual(error.code, grpc.status.ABORTED, error.details);
  match(error.details, /^ACCESS_TOKEN_EXPIRED\(2,[0-9a-f]{8}\): Claims were valid until /);
  const [, validUntil, now] =
    /Claims were valid until (\S+), current time is (\S+)$/.exec(error.details) ?? [];
  strictEqual(validUntil, javaInstant(exp * 1000));
  ok(Date.parse(now ?? "") >= exp * 1000, `ended at ${now}, before the expiry ${validUntil}`);
  const info = error.status?.errorInfos[0];
  strictEqual(info?.reason, "ACCESS_TOKEN_EXPIRED");
  strictEqual(info?.metadata.category, "2");
  strictEqual(info?.metadata.definite_answer, "false");
  deepStrictEqual(
    error.status?.retryInfos.map((r) => r.retryDelaySeconds),
    [1],
  );
}

describe("streams end at their token's expiry with ACCESS_TOKEN_EXPIRED (Canton's ongoing stream authorization)", () => {
  let sandbox: RunningSandbox;
  let party: string;
  before(async () => {
    sandbox = await startSandbox({
      port: 0,
      auth: { mode: "hs256", secret: SECRET },
      authorizer: permissiveAuthorizer(),
      // An ACS larger than the client's flow-control window: a client that stops reading holds it open.
      preload: { ticks: 3000, payloadBytes: 1000 },
    });
    party = sandbox.preloaded?.party ?? "";
  });
  after(() => sandbox.stop());

  const eventFormat = () => ({
    filtersByParty: { [party]: { cumulative: [{ wildcardFilter: { includeCreatedEventBlob: false } }] } },
  });
  const tailingUpdates = () => ({
    beginExclusive: String(sandbox.preloaded?.lastOffset ?? 0),
    updateFormat: {
      includeTransactions: { eventFormat: eventFormat(), transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
    },
  });

  it("ends an idle update stream at the expiry, and its call with it", { timeout: 30_000 }, async () => {
    const exp = inSeconds(3);
    const stream = openStream(sandbox.port, UPDATES, "GetUpdates", tailingUpdates(), hs(exp));
    try {
      assertAccessTokenExpired(await stream.ended, exp);
      await waitFor("the sandbox's call to end", () => sandbox.calls.open("UpdateService/GetUpdates") === 0);
    } finally {
      stream.close();
    }
  });

  it("ends a completion stream at the expiry", { timeout: 30_000 }, async () => {
    const exp = inSeconds(3);
    const request = { userId: "participant_admin", parties: [party], beginExclusive: "0" };
    const stream = openStream(sandbox.port, COMPLETIONS, "CompletionStream", request, hs(exp));
    try {
      assertAccessTokenExpired(await stream.ended, exp);
    } finally {
      stream.close();
    }
  });

  it("ends an active-contracts stream held by a reader that stopped reading, after what it had sent", {
    timeout: 30_000,
  }, async () => {
    const exp = inSeconds(3);
    const request = { activeAtOffset: String(sandbox.preloaded?.lastOffset), eventFormat: eventFormat() };
    const stream = openStream(sandbox.port, SERVICES.state, "GetActiveContracts", request, hs(exp));
    try {
      await waitFor("the first contract", () => stream.messages.length > 0);
      stream.call.pause();
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 200));
      stream.call.resume();
      assertAccessTokenExpired(await stream.ended, exp);
      ok(stream.messages.length < 3000, `all ${stream.messages.length} contracts arrived: not held`);
    } finally {
      stream.close();
    }
  });

  it("keeps no timer of a stream that ended before its token expired", { timeout: 30_000 }, async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const before = timers();
    const streams = Array.from({ length: 20 }, () =>
      openStream(sandbox.port, UPDATES, "GetUpdates", tailingUpdates(), hs(inSeconds(240))),
    );
    await waitFor("20 open update streams", () => sandbox.calls.open("UpdateService/GetUpdates") === 20);
    const open = timers();
    for (const stream of streams) stream.close();
    await waitFor("the streams to end", () => sandbox.calls.open("UpdateService/GetUpdates") === 0);
    await waitFor(
      `the timers to go (${before} before, ${open} while open, ${timers()} now)`,
      () => timers() <= before,
    );
  });
});

describe("the lifetime check on odd expiries", () => {
  it("refuses an exp far past any date (1e20) with its reason, without failing itself", async () => {
    const verifier = createTokenVerifier({ mode: "hs256", secret: SECRET, maxTokenLifetimeMs: 300_000 });
    const result = await verifier.verify(hs(1e20));
    deepStrictEqual(result, {
      ok: false,
      reason: "Could not verify JWT token: token lifetime (1e+23 ms after the epoch) too long",
    });
  });
});
