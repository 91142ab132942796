import { signToken } from "../jwt/test-tokens.js";
import { type SandboxProcess, startSandboxProcess } from "../support/sandbox-process.js";
import { type ApiModel, apiModel, type LedgerNames } from "./api-model.js";
import type { Tokens } from "./cases.js";
import type { WatchedLedger } from "./fuzz-run.js";
import { type GatewayProcess, startGatewayProcess } from "./processes.js";
import { sendRaw } from "./raw-http.js";

/**
 * The fuzzer's stack: a standalone sandbox process, a gateway process in front of it, and the
 * ledger names the fuzzer works with, set up through the gateway with the bootstrap admin.
 * The control user (participant_admin) is never named by a fuzz case: its requests prove the
 * gateway still serves after the abuse.
 */
export interface FuzzStackOptions {
  /** `hs256`: sandbox and gateway both verify signatures; `unsafe`: the default `make run` set-up. */
  auth: "unsafe" | "hs256";
  /** Extra gateway flags. */
  gatewayArgs?: string[];
}

export interface FuzzStack {
  gateway: GatewayProcess;
  sandbox: SandboxProcess;
  model: ApiModel;
  names: LedgerNames;
  tokens: Tokens;
  /** GET on a new connection with the control user's token; the status, or 0 when no answer came within `timeoutMs`. */
  control(path: string, timeoutMs?: number): Promise<number>;
  /** Kills the sandbox (SIGKILL) and starts a new one on the same port; the new process. */
  restartSandbox(): Promise<SandboxProcess>;
  /** A new sandbox after the old one died, with the fuzzer's names set up again (`names` is updated). */
  reviveLedger(): Promise<void>;
  stop(): Promise<void>;
}

const SECRET = "fuzz-secret";
const FUZZ_USER = "fuzz_admin";

/** Two worker threads whatever the machine's cores, so that RSS figures compare across machines. */
export const FUZZ_WORKERS = 2;

export async function startFuzzStack(options: FuzzStackOptions): Promise<FuzzStack> {
  const sandboxArgs = options.auth === "hs256" ? ["--auth-mode", "hs256", "--auth-secret", SECRET] : [];
  let sandbox = await startSandboxProcess({ args: sandboxArgs });
  const gatewayArgs = [
    "--server.workers",
    String(FUZZ_WORKERS),
    // A socket that never completes its query frame is ended after this (the default is 30 s).
    "--websocket-config.query-frame-timeout",
    "5s",
    "--log.level",
    "info",
    ...(options.auth === "hs256" ? ["--auth.mode", "hs256", "--auth.secret", SECRET] : []),
    ...(options.gatewayArgs ?? []),
  ];
  let gateway: GatewayProcess;
  try {
    gateway = await startGatewayProcess(sandbox.port, gatewayArgs);
  } catch (error) {
    await sandbox.stop();
    throw error;
  }
  const base = `http://127.0.0.1:${gateway.port}`;
  // Minted per request: a soak outlasts a token's five minutes.
  const controlToken = () => signToken("participant_admin", { key: SECRET });
  const call = async (path: string, body?: unknown, token = controlToken()): Promise<unknown> => {
    const response = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`set-up ${path}: ${response.status} ${text}`);
    return text === "" ? {} : JSON.parse(text);
  };
  try {
    const names = await setUpLedger(base, call);
    const model = apiModel(
      await (await fetch(`${base}/docs/openapi`)).text(),
      await (await fetch(`${base}/docs/asyncapi`)).text(),
    );
    const stack: FuzzStack = {
      gateway,
      get sandbox() {
        return sandbox;
      },
      model,
      names,
      tokens: { secret: SECRET, verified: options.auth === "hs256", user: FUZZ_USER },
      async control(path, timeoutMs = 10_000) {
        // A connection of its own each time: with several workers, the kernel picks one per connection.
        const outcome = await sendRaw(
          gateway.port,
          { method: "GET", target: path, headers: [["Authorization", `Bearer ${controlToken()}`]] },
          timeoutMs,
        );
        return outcome.kind === "answer" ? outcome.status : 0;
      },
      async restartSandbox() {
        await sandbox.kill();
        sandbox = await startSandboxProcess({ port: sandbox.port, args: sandboxArgs });
        return sandbox;
      },
      async reviveLedger() {
        await this.restartSandbox();
        Object.assign(names, await setUpLedger(base, call));
      },
      async stop() {
        await gateway.stop();
        await sandbox.stop();
      },
    };
    return stack;
  } catch (error) {
    await gateway.stop();
    await sandbox.stop();
    throw error;
  }
}

type Call = (path: string, body?: unknown, token?: string) => Promise<unknown>;

/** Parties, users and a contract of the fuzzer's own, on a fresh ledger (again after a restart). */
async function setUpLedger(base: string, call: Call): Promise<LedgerNames> {
  await waitUntilReady(base);
  const party = async (hint: string) =>
    ((await call("/v2/parties", { partyIdHint: hint })) as { partyDetails: { party: string } }).partyDetails
      .party;
  const alice = await party("fuzzalice");
  const bob = await party("fuzzbob");
  const right = (kind: string, value: object = {}) => ({ kind: { [kind]: { value } } });
  const user = (id: string, rights: object[]) =>
    call("/v2/users", { user: { id, primaryParty: alice }, rights });
  await user(FUZZ_USER, [
    right("ParticipantAdmin"),
    right("CanActAs", { party: alice }),
    right("CanActAs", { party: bob }),
    right("CanReadAsAnyParty"),
  ]);
  await user("fuzz_alice", [right("CanActAs", { party: alice })]);
  await user("fuzz_victim", [right("CanReadAs", { party: bob })]);
  const fuzzToken = signToken(FUZZ_USER, { key: SECRET });
  const created = (await call(
    "/v2/commands/submit-and-wait-for-transaction",
    {
      commands: {
        commandId: "fuzz-setup-iou",
        actAs: [alice],
        commands: [
          {
            CreateCommand: {
              templateId: "#gateway-samples:Iou:Iou",
              createArguments: { issuer: alice, owner: bob, currency: "EUR", amount: "100", observers: [] },
            },
          },
        ],
      },
    },
    fuzzToken,
  )) as {
    transaction: { updateId: string; offset: number; events: { CreatedEvent: { contractId: string } }[] };
  };
  const packages = (await call("/v2/packages")) as { packageIds: string[] };
  const synchronizers = (await call("/v2/state/connected-synchronizers")) as {
    connectedSynchronizers: { synchronizerId: string }[];
  };
  const end = (await call("/v2/state/ledger-end")) as { offset: number };
  return {
    parties: [alice, bob],
    users: ["fuzz_alice", "fuzz_victim"],
    contractIds: created.transaction.events.map((e) => e.CreatedEvent.contractId),
    updateIds: [created.transaction.updateId],
    packageIds: packages.packageIds,
    synchronizerId: synchronizers.connectedSynchronizers[0]?.synchronizerId ?? "",
    ledgerEnd: end.offset,
  };
}

/** The stack's ledger as the fuzz run watches it: a death is a finding, then a new ledger. */
export function watchLedger(stack: FuzzStack): WatchedLedger {
  return {
    alive: () => stack.sandbox.child.exitCode === null && stack.sandbox.child.signalCode === null,
    output: () => stack.sandbox.output(),
    revive: () => stack.reviveLedger(),
  };
}

async function waitUntilReady(base: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const status = await fetch(`${base}/readyz`)
      .then((r) => r.status)
      .catch(() => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the gateway never became ready");
}
