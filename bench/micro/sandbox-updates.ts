/**
 * Direct gRPC read throughput of the sandbox's update stream: the ceiling a gateway benchmark
 * compares against. Starts the standalone sandbox (its own process, as in a gateway benchmark)
 * with `--preload ticks=N`, grants a reader user CanReadAs on the ticks' owner, and reads
 * GetUpdates over the whole preload (bounded, ACS_DELTA, wildcard filter) several times.
 * The first pass renders every transaction; later passes reuse the renderings, as repeated
 * benchmark runs over one preloaded ledger do.
 *
 *   node --import tsx bench/micro/sandbox-updates.ts [--ticks 200000] [--passes 3] [--payload-bytes 64]
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { arch, cpus, platform } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { createSigner } from "fast-jwt";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { commandLine } from "../lib/command-line.js";

const { values } = commandLine("micro/sandbox-updates.js", {
  ticks: { type: "string", default: "200000" },
  passes: { type: "string", default: "3" },
  "payload-bytes": { type: "string", default: "64" },
});
const TICKS = Number(values.ticks);
const PASSES = Number(values.passes);
const PAYLOAD = Number(values["payload-bytes"]);

const tokenFor = (sub: string) =>
  createSigner({ key: "bench-secret", algorithm: "HS256" })({ sub, scope: "daml_ledger_api" });
const metadataFor = (sub: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${tokenFor(sub)}`);
  return metadata;
};

async function startSandbox(): Promise<{
  port: number;
  party: string;
  preloadSeconds: number;
  stop(): void;
}> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/sandbox/main.ts",
      "--port",
      "0",
      "--log-level",
      "warn",
      "--preload",
      `ticks=${TICKS},payloadBytes=${PAYLOAD}`,
    ],
    { cwd: projectRoot(), stdio: ["ignore", "pipe", "pipe"] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}`)));
    createInterface({ input: child.stdout! }).once("line", (line) => resolve(Number(line)));
  });
  const party = await new Promise<string>((resolve) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      const match = /owned by (\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  return {
    port,
    party,
    preloadSeconds: (performance.now() - started) / 1000,
    stop: () => child.kill("SIGTERM"),
  };
}

function unary(
  client: grpc.Client,
  method: string,
  request: object,
  metadata: grpc.Metadata,
): Promise<unknown> {
  return new Promise((resolve, reject) =>
    (client as unknown as Record<string, (...a: unknown[]) => void>)[method]!.call(
      client,
      request,
      metadata,
      (error: Error | null, response: unknown) => (error ? reject(error) : resolve(response)),
    ),
  );
}

interface Pass {
  readonly transactions: number;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
}

/**
 * A client that does not decode: what the sandbox itself can serve (one message per tick
 * transaction, so messages = events here).
 */
function rawUpdatesClient(address: string): grpc.Client {
  const method = ledgerApiProtos().service("com.daml.ledger.api.v2.UpdateService").GetUpdates!;
  const Client = grpc.makeGenericClientConstructor(
    { GetUpdates: { ...method, responseDeserialize: (bytes: Buffer) => bytes } },
    "RawUpdateService",
  );
  return new Client(address, grpc.credentials.createInsecure());
}

function readUpdates(client: grpc.Client, party: string, end: number, raw = false): Promise<Pass> {
  const request = {
    beginExclusive: "0",
    endInclusive: String(end),
    updateFormat: {
      includeTransactions: {
        eventFormat: {
          filtersByParty: { [party]: { cumulative: [{ wildcardFilter: {} }] } },
          verbose: false,
        },
        transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
      },
    },
  };
  const start = performance.now();
  const call = (
    client as unknown as Record<string, (...a: unknown[]) => grpc.ClientReadableStream<unknown>>
  ).GetUpdates!.call(client, request, metadataFor("bench-reader"));
  let transactions = 0;
  let events = 0;
  return new Promise((resolve, reject) => {
    call.on("data", (message: { transaction?: { events: unknown[] } }) => {
      if (raw) {
        transactions += 1;
        events += 1;
      } else if (message.transaction) {
        transactions += 1;
        events += message.transaction.events.length;
      }
    });
    call.on("error", reject);
    call.on("end", () => {
      const seconds = (performance.now() - start) / 1000;
      resolve({ transactions, events, seconds, eventsPerSecond: Math.round(events / seconds) });
    });
  });
}

const sandbox = await startSandbox();
try {
  const protos = ledgerApiProtos();
  const address = `127.0.0.1:${sandbox.port}`;
  const users = new (protos.client("com.daml.ledger.api.v2.admin.UserManagementService"))(
    address,
    grpc.credentials.createInsecure(),
  );
  await unary(
    users,
    "CreateUser",
    {
      user: { id: "bench-reader", primaryParty: sandbox.party },
      rights: [{ canReadAs: { party: sandbox.party } }],
    },
    metadataFor("participant_admin"),
  );
  const state = new (protos.client("com.daml.ledger.api.v2.StateService"))(
    address,
    grpc.credentials.createInsecure(),
  );
  const { offset } = (await unary(state, "GetLedgerEnd", {}, metadataFor("bench-reader"))) as {
    offset: string;
  };
  const updates = new (protos.client("com.daml.ledger.api.v2.UpdateService"))(
    address,
    grpc.credentials.createInsecure(),
  );
  const passes: Pass[] = [];
  for (let i = 0; i < PASSES; i++) {
    const pass = await readUpdates(updates, sandbox.party, Number(offset));
    passes.push(pass);
    console.log(
      `pass ${i + 1}: ${pass.events} events in ${pass.transactions} transactions, ${pass.seconds.toFixed(2)} s, ${pass.eventsPerSecond} events/s`,
    );
  }
  const raw = rawUpdatesClient(address);
  const rawPass = await readUpdates(raw, sandbox.party, Number(offset), true);
  raw.close();
  console.log(
    `undecoded (sandbox side only): ${rawPass.events} messages, ${rawPass.seconds.toFixed(2)} s, ${rawPass.eventsPerSecond} messages/s`,
  );
  console.log(`preload of ${TICKS} ticks (process start included): ${sandbox.preloadSeconds.toFixed(2)} s`);
  const result = {
    benchmark: "sandbox-updates",
    date: new Date().toISOString(),
    machine: {
      platform: platform(),
      arch: arch(),
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      node: process.version,
    },
    ticks: TICKS,
    payloadBytes: PAYLOAD,
    preloadSecondsIncludingStart: Number(sandbox.preloadSeconds.toFixed(2)),
    passes,
    undecodedPass: rawPass,
  };
  const dir = join(projectRoot(), "bench", "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "sandbox-updates.json"), `${JSON.stringify(result, null, 2)}\n`);
  users.close();
  state.close();
  updates.close();
} finally {
  sandbox.stop();
}
