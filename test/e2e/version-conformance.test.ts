import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import WebSocket from "ws";
import { parse } from "yaml";
import { type ApiVersion, KNOWN_API_VERSIONS } from "../../src/proto/api-version.js";
import { projectRoot } from "../../src/proto/project-root.js";
import { ed25519Wallet, type Wallet } from "../sandbox/interactive/wallet.js";
import { type Stack, startStack } from "../support/stack.js";
import { assertCantonShape } from "./canton-shapes.js";
import { jsonKey, jsonSignature } from "./external-wallet.js";
import { allocate, call, IOU, type Reply, userFor, wildcard } from "./ledger-client.js";
import { openStream } from "./open-stream.js";

// biome-ignore lint/suspicious/noExplicitAny: test code reads JSON answers loosely
type Json = Record<string, any>;

/**
 * Each known Canton release's JSON API, against the sandbox speaking that release: every operation
 * and every WebSocket channel of the release's spec (schemas/operations.json, imported from
 * Canton's OpenAPI/AsyncAPI of the release) is answered 200 and schema-valid against the
 * release's shapes (schemas/components*.json); /docs/openapi and /docs/asyncapi list exactly
 * them; and every operation and channel of the other releases is refused as that release's
 * Canton refuses a path it does not know.
 */
interface ReleaseSpec {
  apiVersion: string;
  /** `METHOD path` -> the success's schema: `X`, `X[]` (a list), or null (no component). */
  operations: Record<string, string | null>;
  channels: Record<string, { request: string; response: string }>;
}

const SPECS = JSON.parse(readFileSync(join(projectRoot(), "schemas", "operations.json"), "utf8")) as Record<
  ApiVersion,
  ReleaseSpec
>;

/** What Canton 3.6 no longer has (issue 36): the spec of 3.6 lacks these, and the gateway refuses them. */
const REMOVED_IN_3_6 = [
  "POST /v2/updates/flats",
  "POST /v2/updates/trees",
  "POST /v2/updates/transaction-by-id",
  "POST /v2/updates/transaction-by-offset",
  "GET /v2/updates/transaction-tree-by-id/{update-id}",
  "GET /v2/updates/transaction-tree-by-offset/{offset}",
  "GET /v2/package-vetting",
  "POST /v2/package-vetting",
  "GET /v2/interactive-submission/preferred-package-version",
];

/** Every operation of every known release, and every channel. */
const ALL_OPERATIONS = [...new Set(KNOWN_API_VERSIONS.flatMap((v) => Object.keys(SPECS[v].operations)))];
const ALL_CHANNELS = [...new Set(KNOWN_API_VERSIONS.flatMap((v) => Object.keys(SPECS[v].channels)))];

const SAMPLE_DAR = readFileSync(join(projectRoot(), "docs", "samples", "gateway-samples-1.0.0.dar"));

/** What the calls share: the parties, users and ledger names the earlier calls made. */
interface World {
  stack: Stack;
  alice: string;
  aliceToken: string;
  sync1: string;
  sync2: string;
  packageId: string;
  contractId: string;
  updateId: string;
  offset: number;
  reassignmentId: string;
  wallet: Wallet;
  walletParty: string;
  walletToken: string;
  topology: Json;
  /** The hash of the prepared transaction executed last (base64, as prepare answers it). */
  transactionHash: string;
}

/** One call of an operation: its reply (JSON parsed, text kept, bytes as a Buffer). */
type Step = (w: World) => Promise<Reply<unknown>>;

let commandCounter = 0;
const commandId = (label: string) => `conformance-${label}-${++commandCounter}`;

const iouCommand = (party: string, amount = "10") => ({
  CreateCommand: {
    templateId: IOU,
    createArguments: { issuer: party, owner: party, currency: "EUR", amount, observers: [] },
  },
});
const jsCommands = (w: World, label: string) => ({
  commands: [iouCommand(w.alice)],
  commandId: commandId(label),
  actAs: [w.alice],
});
const acsDelta = (w: World) => ({
  includeTransactions: { eventFormat: wildcard([w.alice]), transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
});
const bytes = async (w: World, method: string, path: string, body?: Buffer): Promise<Reply<unknown>> => {
  const res = await w.stack.request(path, { method, ...(body ? { body } : {}) });
  const text = Buffer.from(await res.arrayBuffer());
  const json = res.headers.get("content-type")?.startsWith("application/json");
  return { status: res.status, body: json && text.length > 0 ? JSON.parse(text.toString("utf8")) : text };
};
const alice = (w: World) => encodeURIComponent(w.alice);
/** A call as alice's user, who may read what alice sees. */
const read = (w: World, method: string, path: string, body?: unknown) =>
  call(w.stack, method, path, body, w.aliceToken);
const listTwin = "?stream_idle_timeout_ms=300";

async function prepareAndSign(w: World): Promise<Json> {
  const prepared = await call<Json>(
    w.stack,
    "POST",
    "/v2/interactive-submission/prepare",
    { commandId: commandId("prepare"), actAs: [w.walletParty], commands: [iouCommand(w.walletParty)] },
    w.walletToken,
  );
  assert.equal(prepared.status, 200, JSON.stringify(prepared.body));
  w.transactionHash = prepared.body.preparedTransactionHash;
  const hash = Buffer.from(w.transactionHash, "base64");
  return {
    preparedTransaction: prepared.body.preparedTransaction,
    partySignatures: {
      signatures: [{ party: w.walletParty, signatures: [jsonSignature(w.wallet, hash)] }],
    },
    submissionId: commandId("submission"),
    hashingSchemeVersion: "HASHING_SCHEME_VERSION_V2",
    deduplicationPeriod: { Empty: {} },
  };
}

/**
 * A call of each operation, in an order where each finds what it needs (a contract, an update, a
 * user) made by an earlier one. An operation a release lacks is skipped in that release's run.
 */
const STEPS: [string, Step][] = [
  ["GET /livez", (w) => bytes(w, "GET", "/livez")],
  ["GET /readyz", (w) => bytes(w, "GET", "/readyz")],
  ["GET /v2/version", (w) => call(w.stack, "GET", "/v2/version")],
  ["GET /v2/state/ledger-end", (w) => call(w.stack, "GET", "/v2/state/ledger-end")],
  ["GET /v2/state/latest-pruned-offsets", (w) => call(w.stack, "GET", "/v2/state/latest-pruned-offsets")],
  [
    "GET /v2/state/connected-synchronizers",
    (w) => call(w.stack, "GET", `/v2/state/connected-synchronizers?party=${alice(w)}`),
  ],
  ["GET /v2/parties/participant-id", (w) => call(w.stack, "GET", "/v2/parties/participant-id")],
  ["POST /v2/parties", (w) => call(w.stack, "POST", "/v2/parties", { partyIdHint: "conformance-carol" })],
  ["GET /v2/parties", (w) => call(w.stack, "GET", "/v2/parties")],
  ["GET /v2/parties/{party}", (w) => call(w.stack, "GET", `/v2/parties/${alice(w)}`)],
  [
    "PATCH /v2/parties/{party}",
    (w) =>
      call(w.stack, "PATCH", `/v2/parties/${alice(w)}`, {
        partyDetails: { party: w.alice, localMetadata: { annotations: { team: "conformance" } } },
        updateMask: { paths: ["local_metadata.annotations"] },
      }),
  ],
  [
    "POST /v2/users",
    (w) =>
      call(w.stack, "POST", "/v2/users", {
        user: { id: "conformance-user", primaryParty: w.alice },
        rights: [{ kind: { CanReadAs: { value: { party: w.alice } } } }],
      }),
  ],
  ["GET /v2/users", (w) => call(w.stack, "GET", "/v2/users")],
  ["GET /v2/users/{user-id}", (w) => call(w.stack, "GET", "/v2/users/conformance-user")],
  [
    "PATCH /v2/users/{user-id}",
    (w) =>
      call(w.stack, "PATCH", "/v2/users/conformance-user", {
        user: { id: "conformance-user", isDeactivated: false, metadata: { annotations: { a: "b" } } },
        updateMask: { paths: ["metadata"] },
      }),
  ],
  [
    "GET /v2/authenticated-user",
    (w) => call(w.stack, "GET", "/v2/authenticated-user", undefined, w.aliceToken),
  ],
  ["GET /v2/users/{user-id}/rights", (w) => call(w.stack, "GET", "/v2/users/conformance-user/rights")],
  [
    "POST /v2/users/{user-id}/rights",
    (w) =>
      call(w.stack, "POST", "/v2/users/conformance-user/rights", {
        userId: "conformance-user",
        rights: [{ kind: { CanActAs: { value: { party: w.alice } } } }],
      }),
  ],
  [
    "PATCH /v2/users/{user-id}/rights",
    (w) =>
      call(w.stack, "PATCH", "/v2/users/conformance-user/rights", {
        userId: "conformance-user",
        rights: [{ kind: { CanActAs: { value: { party: w.alice } } } }],
      }),
  ],
  [
    "POST /v2/idps",
    (w) =>
      call(w.stack, "POST", "/v2/idps", {
        identityProviderConfig: {
          identityProviderId: "conformance-idp",
          issuer: "conformance-issuer",
          jwksUrl: "https://idp.example.com/jwks.json",
          isDeactivated: false,
          audience: "",
        },
      }),
  ],
  ["GET /v2/idps", (w) => call(w.stack, "GET", "/v2/idps")],
  ["GET /v2/idps/{idp-id}", (w) => call(w.stack, "GET", "/v2/idps/conformance-idp")],
  [
    "PATCH /v2/idps/{idp-id}",
    (w) =>
      call(w.stack, "PATCH", "/v2/idps/conformance-idp", {
        identityProviderConfig: {
          identityProviderId: "conformance-idp",
          issuer: "conformance-issuer",
          jwksUrl: "https://idp.example.com/jwks.json",
          isDeactivated: false,
          audience: "conformance",
        },
        updateMask: { paths: ["audience"] },
      }),
  ],
  [
    "PATCH /v2/users/{user-id}/identity-provider-id",
    async (w) => {
      const moved = await call(w.stack, "PATCH", "/v2/users/conformance-user/identity-provider-id", {
        userId: "conformance-user",
        sourceIdentityProviderId: "",
        targetIdentityProviderId: "conformance-idp",
      });
      // Back to the default provider, so that the provider can go (below).
      const back = await call(w.stack, "PATCH", "/v2/users/conformance-user/identity-provider-id", {
        userId: "conformance-user",
        sourceIdentityProviderId: "conformance-idp",
        targetIdentityProviderId: "",
      });
      assert.equal(back.status, 200, JSON.stringify(back.body));
      return moved;
    },
  ],
  ["DELETE /v2/users/{user-id}", (w) => call(w.stack, "DELETE", "/v2/users/conformance-user")],
  ["DELETE /v2/idps/{idp-id}", (w) => call(w.stack, "DELETE", "/v2/idps/conformance-idp")],
  [
    "GET /v2/packages",
    async (w) => {
      const reply = await call<Json>(w.stack, "GET", "/v2/packages");
      w.packageId = reply.body.packageIds[0];
      return reply;
    },
  ],
  ["GET /v2/packages/{package-id}", (w) => bytes(w, "GET", `/v2/packages/${w.packageId}`)],
  ["GET /v2/packages/{package-id}/status", (w) => call(w.stack, "GET", `/v2/packages/${w.packageId}/status`)],
  ["POST /v2/dars/validate", (w) => bytes(w, "POST", "/v2/dars/validate", SAMPLE_DAR)],
  ["POST /v2/dars", (w) => bytes(w, "POST", "/v2/dars", SAMPLE_DAR)],
  ["POST /v2/packages", (w) => bytes(w, "POST", "/v2/packages", SAMPLE_DAR)],
  ["GET /v2/package-vetting", (w) => call(w.stack, "GET", "/v2/package-vetting", {})],
  ["POST /v2/package-vetting/list", (w) => call(w.stack, "POST", "/v2/package-vetting/list", {})],
  [
    "POST /v2/package-vetting",
    (w) =>
      call(w.stack, "POST", "/v2/package-vetting", {
        changes: [{ operation: { Vet: { value: { packages: [{ packageId: w.packageId }] } } } }],
        dryRun: true,
        synchronizerId: w.sync1,
      }),
  ],
  [
    "POST /v2/package-vetting/update",
    (w) =>
      call(w.stack, "POST", "/v2/package-vetting/update", {
        changes: [{ operation: { Vet: { value: { packages: [{ packageId: w.packageId }] } } } }],
        dryRun: true,
        synchronizerId: w.sync1,
      }),
  ],
  [
    "POST /v2/commands/submit-and-wait",
    (w) => call(w.stack, "POST", "/v2/commands/submit-and-wait", jsCommands(w, "saw"), w.aliceToken),
  ],
  [
    "POST /v2/commands/submit-and-wait-for-transaction",
    async (w) => {
      const reply = await call<Json>(
        w.stack,
        "POST",
        "/v2/commands/submit-and-wait-for-transaction",
        { commands: jsCommands(w, "sawft") },
        w.aliceToken,
      );
      const transaction = reply.body?.transaction;
      w.contractId = transaction?.events?.[0]?.CreatedEvent?.contractId;
      w.updateId = transaction?.updateId;
      w.offset = transaction?.offset;
      return reply;
    },
  ],
  [
    "POST /v2/commands/submit-and-wait-for-transaction-tree",
    (w) =>
      call(
        w.stack,
        "POST",
        "/v2/commands/submit-and-wait-for-transaction-tree",
        jsCommands(w, "tree"),
        w.aliceToken,
      ),
  ],
  [
    "POST /v2/commands/async/submit",
    (w) => call(w.stack, "POST", "/v2/commands/async/submit", jsCommands(w, "async"), w.aliceToken),
  ],
  [
    "POST /v2/commands/submit-and-wait-for-reassignment",
    async (w) => {
      const reply = await call<Json>(
        w.stack,
        "POST",
        "/v2/commands/submit-and-wait-for-reassignment",
        {
          reassignmentCommands: {
            commandId: commandId("unassign"),
            submitter: w.alice,
            commands: [
              {
                command: {
                  UnassignCommand: { value: { contractId: w.contractId, source: w.sync1, target: w.sync2 } },
                },
              },
            ],
          },
          eventFormat: wildcard([w.alice]),
        },
        w.aliceToken,
      );
      w.reassignmentId = reply.body?.reassignment?.events?.[0]?.JsUnassignedEvent?.value?.reassignmentId;
      return reply;
    },
  ],
  [
    "POST /v2/commands/async/submit-reassignment",
    (w) =>
      call(
        w.stack,
        "POST",
        "/v2/commands/async/submit-reassignment",
        {
          reassignmentCommands: {
            commandId: commandId("assign"),
            submitter: w.alice,
            commands: [
              {
                command: {
                  AssignCommand: {
                    value: { reassignmentId: w.reassignmentId, source: w.sync1, target: w.sync2 },
                  },
                },
              },
            ],
          },
        },
        w.aliceToken,
      ),
  ],
  [
    "POST /v2/updates/update-by-offset",
    (w) => read(w, "POST", "/v2/updates/update-by-offset", { offset: w.offset, updateFormat: acsDelta(w) }),
  ],
  [
    "POST /v2/updates/update-by-id",
    (w) => read(w, "POST", "/v2/updates/update-by-id", { updateId: w.updateId, updateFormat: acsDelta(w) }),
  ],
  [
    "POST /v2/updates/get-updates-page",
    (w) => read(w, "POST", "/v2/updates/get-updates-page", { updateFormat: acsDelta(w), maxPageSize: 5 }),
  ],
  [
    "POST /v2/updates/transaction-by-offset",
    (w) =>
      read(w, "POST", "/v2/updates/transaction-by-offset", {
        offset: w.offset,
        requestingParties: [w.alice],
      }),
  ],
  [
    "POST /v2/updates/transaction-by-id",
    (w) =>
      read(w, "POST", "/v2/updates/transaction-by-id", {
        updateId: w.updateId,
        requestingParties: [w.alice],
      }),
  ],
  [
    "GET /v2/updates/transaction-tree-by-offset/{offset}",
    (w) => read(w, "GET", `/v2/updates/transaction-tree-by-offset/${w.offset}?parties=${alice(w)}`),
  ],
  [
    "GET /v2/updates/transaction-tree-by-id/{update-id}",
    (w) => read(w, "GET", `/v2/updates/transaction-tree-by-id/${w.updateId}?parties=${alice(w)}`),
  ],
  [
    "POST /v2/events/events-by-contract-id",
    (w) =>
      read(w, "POST", "/v2/events/events-by-contract-id", {
        contractId: w.contractId,
        eventFormat: wildcard([w.alice]),
      }),
  ],
  [
    "POST /v2/contracts/contract-by-id",
    (w) =>
      read(w, "POST", "/v2/contracts/contract-by-id", {
        contractId: w.contractId,
        queryingParties: [w.alice],
      }),
  ],
  [
    "GET /v2/state/active-contracts-page",
    (w) => read(w, "GET", "/v2/state/active-contracts-page", { eventFormat: wildcard([w.alice]) }),
  ],
  [
    "POST /v2/state/active-contracts-page",
    (w) => read(w, "POST", "/v2/state/active-contracts-page", { eventFormat: wildcard([w.alice]) }),
  ],
  [
    "POST /v2/interactive-submission/preferred-packages",
    (w) =>
      read(w, "POST", "/v2/interactive-submission/preferred-packages", {
        packageVettingRequirements: [{ parties: [w.alice], packageName: "gateway-samples" }],
      }),
  ],
  [
    "GET /v2/interactive-submission/preferred-package-version",
    (w) =>
      read(
        w,
        "GET",
        `/v2/interactive-submission/preferred-package-version?parties=${alice(w)}&package-name=gateway-samples`,
      ),
  ],
  [
    "POST /v2/parties/external/generate-topology",
    async (w) => {
      const reply = await call<Json>(w.stack, "POST", "/v2/parties/external/generate-topology", {
        synchronizer: w.sync1,
        partyHint: "conformance-wallet",
        publicKey: jsonKey(w.wallet),
      });
      w.topology = reply.body;
      w.walletParty = reply.body?.partyId;
      return reply;
    },
  ],
  [
    "POST /v2/parties/external/allocate",
    async (w) => {
      w.walletToken = await userFor(w.stack, "conformance-wallet-user", []);
      return call(w.stack, "POST", "/v2/parties/external/allocate", {
        synchronizer: w.sync1,
        onboardingTransactions: w.topology.topologyTransactions.map((transaction: string) => ({
          transaction,
        })),
        multiHashSignatures: [jsonSignature(w.wallet, Buffer.from(w.topology.multiHash, "base64"))],
        userId: "conformance-wallet-user",
      });
    },
  ],
  [
    "POST /v2/interactive-submission/prepare",
    (w) =>
      call(
        w.stack,
        "POST",
        "/v2/interactive-submission/prepare",
        { commandId: commandId("prepare"), actAs: [w.walletParty], commands: [iouCommand(w.walletParty)] },
        w.walletToken,
      ),
  ],
  [
    "POST /v2/interactive-submission/execute",
    async (w) =>
      call(w.stack, "POST", "/v2/interactive-submission/execute", await prepareAndSign(w), w.walletToken),
  ],
  [
    "POST /v2/interactive-submission/executeAndWait",
    async (w) =>
      call(
        w.stack,
        "POST",
        "/v2/interactive-submission/executeAndWait",
        await prepareAndSign(w),
        w.walletToken,
      ),
  ],
  [
    "POST /v2/interactive-submission/executeAndWaitForTransaction",
    async (w) =>
      call(
        w.stack,
        "POST",
        "/v2/interactive-submission/executeAndWaitForTransaction",
        await prepareAndSign(w),
        w.walletToken,
      ),
  ],
  // Canton 3.6's lookups of an externally signed transaction by its hash, and a party's keys.
  [
    "POST /v2/updates/update-by-hash",
    (w) =>
      call(
        w.stack,
        "POST",
        "/v2/updates/update-by-hash",
        {
          transactionHash: w.transactionHash,
          updateFormat: {
            includeTransactions: {
              eventFormat: wildcard([w.walletParty]),
              transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
            },
          },
        },
        w.walletToken,
      ),
  ],
  [
    "POST /v2/commands/completion-by-hash",
    (w) =>
      call(
        w.stack,
        "POST",
        "/v2/commands/completion-by-hash",
        { transactionHash: w.transactionHash },
        w.walletToken,
      ),
  ],
  [
    "GET /v2/jose/jwks/synchronizer/{synchronizer}/party/{party}",
    (w) =>
      call(
        w.stack,
        "GET",
        `/v2/jose/jwks/synchronizer/${encodeURIComponent(w.sync1)}/party/${encodeURIComponent(w.walletParty)}`,
      ),
  ],
  [
    "POST /v2/commands/completions",
    (w) =>
      call(
        w.stack,
        "POST",
        `/v2/commands/completions${listTwin}`,
        { userId: "alice-user", parties: [w.alice], beginExclusive: 0 },
        w.aliceToken,
      ),
  ],
  [
    "POST /v2/commands/command-completions",
    (w) =>
      call(
        w.stack,
        "POST",
        `/v2/commands/command-completions${listTwin}`,
        { parties: [w.alice], beginExclusive: 0 },
        w.aliceToken,
      ),
  ],
  [
    "POST /v2/state/active-contracts",
    (w) =>
      read(w, "POST", `/v2/state/active-contracts${listTwin}`, {
        eventFormat: wildcard([w.alice]),
        activeAtOffset: w.offset,
      }),
  ],
  [
    "POST /v2/updates",
    (w) =>
      read(w, "POST", `/v2/updates${listTwin}`, {
        beginExclusive: 0,
        endInclusive: w.offset,
        updateFormat: acsDelta(w),
      }),
  ],
  [
    "POST /v2/updates/flats",
    (w) =>
      read(w, "POST", `/v2/updates/flats${listTwin}`, {
        beginExclusive: 0,
        endInclusive: w.offset,
        filter: wildcard([w.alice]),
        verbose: false,
      }),
  ],
  [
    "POST /v2/updates/trees",
    (w) =>
      read(w, "POST", `/v2/updates/trees${listTwin}`, {
        beginExclusive: 0,
        endInclusive: w.offset,
        filter: wildcard([w.alice]),
        verbose: false,
      }),
  ],
];

/** A query frame for each channel, and whether the stream follows the ledger end (it then never ends). */
const CHANNEL_REQUESTS: Record<string, (w: World) => { request: unknown; openEnded: boolean }> = {
  "/v2/commands/completions": (w) => ({
    request: { userId: "alice-user", parties: [w.alice], beginExclusive: 0 },
    openEnded: true,
  }),
  "/v2/commands/command-completions": (w) => ({
    request: { parties: [w.alice], beginExclusive: 0 },
    openEnded: true,
  }),
  "/v2/state/active-contracts": (w) => ({
    request: { eventFormat: wildcard([w.alice]), activeAtOffset: w.offset },
    openEnded: false,
  }),
  "/v2/updates": (w) => ({
    request: { beginExclusive: 0, endInclusive: w.offset, updateFormat: acsDelta(w) },
    openEnded: false,
  }),
  "/v2/updates/flats": (w) => ({
    request: { beginExclusive: 0, endInclusive: w.offset, filter: wildcard([w.alice]), verbose: false },
    openEnded: false,
  }),
  "/v2/updates/trees": (w) => ({
    request: { beginExclusive: 0, endInclusive: w.offset, filter: wildcard([w.alice]), verbose: false },
    openEnded: false,
  }),
};

/** Checks a reply against the release's success schema; returns a description of the misfit, if any. */
function misfit(schema: string | null, reply: Reply<unknown>, version: ApiVersion): string | undefined {
  if (reply.status !== 200) return `status ${reply.status}: ${JSON.stringify(reply.body)?.slice(0, 400)}`;
  if (schema === null) return undefined;
  try {
    if (schema.endsWith("[]")) {
      assert.ok(Array.isArray(reply.body), "a JSON array");
      for (const element of reply.body as unknown[]) assertCantonShape(schema.slice(0, -2), element, version);
    } else assertCantonShape(schema, reply.body, version);
  } catch (error) {
    return `${schema}: ${(error as Error).message}`;
  }
  return undefined;
}

/** The `#/components/...` references of a document that name nothing in it. */
function danglingRefs(document: unknown): string[] {
  const refs = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === "object")
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string") refs.add(value);
        else walk(value);
      }
  };
  walk(document);
  return [...refs].filter((ref) => {
    let at: unknown = document;
    for (const part of ref.replace(/^#\//, "").split("/"))
      at = (at as Record<string, unknown> | undefined)?.[part];
    return at === undefined;
  });
}

/** The `METHOD path` of an operation with the prefix-free template, and the concrete path to call for a refusal. */
const concrete = (template: string) => template.replace(/\{[^}]+\}/g, "x");

for (const version of KNOWN_API_VERSIONS) {
  const spec = SPECS[version];
  const expected = Object.keys(spec.operations);

  describe(`Canton ${version}: the JSON API of that release, against the sandbox speaking it`, () => {
    let w: World;
    before(async () => {
      const stack = await startStack([], {}, { sandbox: { apiVersion: version } });
      const aliceParty = await allocate(stack, "alice");
      const connected = await call<Json>(stack, "GET", "/v2/state/connected-synchronizers");
      const [sync1, sync2] = connected.body.connectedSynchronizers.map((s: Json) => s.synchronizerId);
      w = {
        stack,
        alice: aliceParty,
        aliceToken: await userFor(stack, "alice-user", [aliceParty]),
        sync1,
        sync2,
        wallet: ed25519Wallet(),
      } as World;
    });
    after(() => w.stack.stop());

    it("reports the release, and /docs/openapi lists exactly its operations", async () => {
      const reported = await call<Json>(w.stack, "GET", "/v2/version");
      assert.equal(reported.body.version, version);
      const document = parse(await (await w.stack.request("/docs/openapi", { token: null })).text()) as {
        paths: Record<string, Record<string, { deprecated?: boolean; operationId?: string }>>;
      };
      const listed = Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
      );
      // The gateway's own routes (docs, metrics, stream tickets and their GET forms) besides Canton's.
      const own = (op: string) =>
        /^GET \/(metrics|docs\/)/.test(op) ||
        op.includes("stream-ticket") ||
        (op.startsWith("GET ") && op.slice(4) in spec.channels);
      assert.deepEqual(listed.filter((op) => !own(op)).sort(), [...expected].sort());
      const result = await new Validator().validate(
        document as unknown as Parameters<Validator["validate"]>[0],
      );
      assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 2000));
      assert.deepEqual(danglingRefs(document), [], "every $ref names a schema of the release");
      if (version === "3.6.0") {
        // Canton's own ids, which generated clients name their methods by (one is not made from the path).
        const idOf = (path: string, method: string) => document.paths[path]?.[method]?.operationId;
        assert.equal(idOf("/v2/jose/jwks/synchronizer/{synchronizer}/party/{party}", "get"), "getV2JoseJwks");
        assert.equal(idOf("/v2/updates/update-by-hash", "post"), "postV2UpdatesUpdate-by-hash");
        assert.equal(idOf("/v2/commands/completion-by-hash", "post"), "postV2CommandsCompletion-by-hash");
      }
    });

    it("lists exactly the release's channels in /docs/asyncapi", async () => {
      const document = parse(await (await w.stack.request("/docs/asyncapi", { token: null })).text()) as {
        channels: Record<string, unknown>;
      };
      assert.deepEqual(Object.keys(document.channels).sort(), Object.keys(spec.channels).sort());
      assert.deepEqual(danglingRefs(document), [], "every $ref names a schema or message of the release");
    });

    it("answers every operation of the release 200 and schema-valid (0 violations)", async () => {
      const violations: string[] = [];
      const called = new Set<string>();
      for (const [op, step] of STEPS) {
        if (!(op in spec.operations)) continue;
        called.add(op);
        const reply = await step(w);
        const wrong = misfit(spec.operations[op] ?? null, reply, version);
        if (wrong !== undefined) violations.push(`${op}: ${wrong}`);
      }
      assert.deepEqual(violations, []);
      assert.deepEqual(
        expected.filter((op) => !called.has(op)),
        [],
        "every operation of the release is called",
      );
    });

    it("streams every channel of the release schema-valid over WebSocket (0 violations)", async () => {
      const violations: string[] = [];
      for (const [path, { response }] of Object.entries(spec.channels)) {
        const make = CHANNEL_REQUESTS[path];
        assert.ok(make, `a request for ${path}`);
        const { request, openEnded } = make(w);
        const stream = await openStream(w.stack, path, request, w.aliceToken);
        // An open-ended stream until its first element; a bounded one until its end (close 1000).
        const frames = await stream
          .waitFor((seen) => openEnded && seen.length > 0)
          .catch((error: Error) => {
            if (openEnded || !error.message.startsWith("closed 1000")) throw error;
            return stream.frames;
          });
        stream.close();
        if (frames.length === 0) violations.push(`${path}: no frame`);
        for (const frame of frames) {
          try {
            assertCantonShape(response, frame, version);
          } catch (error) {
            violations.push(`${path}: ${(error as Error).message} in ${JSON.stringify(frame).slice(0, 300)}`);
          }
        }
      }
      assert.deepEqual(violations, []);
    });

    it("refuses the operations and channels of other releases as Canton does an unknown path", async () => {
      const others = ALL_OPERATIONS.filter((op) => !(op in spec.operations));
      const host = new URL(w.stack.url).host;
      for (const op of others) {
        const [method, template] = op.split(" ") as [string, string];
        const path = concrete(template);
        const res = await w.stack.request(path, { method, ...(method === "GET" ? {} : { body: "{}" }) });
        assert.equal(res.status, 404, op);
        assert.deepEqual(
          await res.json(),
          { errors: [`HttpMethod(${method}), uri: http://${host}${path}`], status: 404 },
          op,
        );
      }
      for (const path of ALL_CHANNELS.filter((channel) => !(channel in spec.channels))) {
        const status = await new Promise<number>((resolve, reject) => {
          const socket = new WebSocket(`${w.stack.url.replace(/^http/, "ws")}${path}`, [
            "daml.ws.auth",
            `jwt.token.${w.stack.token}`,
          ]);
          socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
          socket.on("open", () => {
            socket.close();
            reject(new Error(`${path} opened`));
          });
          socket.on("error", () => {});
        });
        assert.equal(status, 404, path);
      }
      if (version === "3.6.0") assert.deepEqual(others.sort(), [...REMOVED_IN_3_6].sort());
    });
  });
}
