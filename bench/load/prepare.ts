import { createHash, randomBytes } from "node:crypto";
import type { JsonClient } from "./json-client.js";
import { type MovingContract, ReassignmentPool } from "./reassignment-pool.js";

/**
 * What a run needs on the server, made through the JSON Ledger API with the run's token (a user
 * with participant_admin): a party of its own (and one holding the acs scenario's contracts),
 * named with a unique run prefix; the rights to act as them, granted to the token's own user
 * (the tool cannot mint tokens for a user it would create) and revoked at the end. Parties and
 * contracts stay: the Ledger API deletes neither. Nothing the run did not create is touched.
 */
interface Server {
  version: string;
  participantId: string;
  /** The embedded sandbox of ledger-json-gateway, which answers a command in ~0.1 ms. */
  embeddedSandbox: boolean;
  /** ledger-json-gateway (its served OpenAPI says so): its WebSockets take in-band token renewal. */
  ledgerJsonGateway: boolean;
}

export interface Prepared {
  server: Server;
  prefix: string;
  userId: string;
  party: string;
  acsParty?: string;
  /**
   * The offsets around the acs party's creations (beginExclusive, endInclusive) and their count:
   * the fixed range the updates-list scenario lists, the same transactions in every request.
   */
  acsRange?: { beginExclusive: number; endInclusive: number; transactions: number };
  templateId: string;
  /** The create arguments of one contract of `owner`. */
  createArguments: (owner: string) => unknown;
  /** The contracts of the submit-and-wait-for-reassignment scenario, on the first of two synchronizers. */
  reassignments?: ReassignmentPool;
  /** The ledger end once everything was made: where the streams begin, the acs reads' offset. */
  ledgerEnd: number;
  /** Takes back the rights granted. */
  cleanUp: () => Promise<void>;
}

export const SANDBOX_CAVEAT = "against the embedded sandbox (answers in ~0.1 ms): not a participant's figure";

/**
 * ledger-json-gateway's embedded sandbox names its participant `NAME::1220<sha256 of
 * "sandbox-participant:NAME">` (src/sandbox/ledger/sandbox-store.ts): a fingerprint seeded from
 * the name, where a Canton participant's is that of its namespace key. No real participant has it.
 */
export function isEmbeddedSandbox(participantId: string): boolean {
  const [name, fingerprint] = participantId.split("::");
  if (name === undefined || fingerprint === undefined) return false;
  return fingerprint === `1220${createHash("sha256").update(`sandbox-participant:${name}`).digest("hex")}`;
}

const SAMPLE_PACKAGE = "gateway-samples";

/**
 * ledger-json-gateway's /docs/openapi carries its own extension (`x-ledger-json-gateway-streaming`);
 * Canton's JSON API serves one without it. Only this gateway gets in-band renewal frames.
 */
async function servesGatewayOpenApi(client: JsonClient, token: string): Promise<boolean> {
  try {
    const answer = await client.request("GET", "/docs/openapi", token);
    return answer.status === 200 && answer.body.includes("x-ledger-json-gateway-streaming");
  } catch {
    return false;
  }
}

/** `$party` anywhere in the user's create arguments stands for the run's party. */
function withParty(value: unknown, party: string): unknown {
  if (value === "$party") return party;
  if (Array.isArray(value)) return value.map((v) => withParty(v, party));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withParty(v, party)]));
  return value;
}

export const createCommand = (prepared: Prepared, commandId: string, owner: string) => ({
  commandId,
  userId: prepared.userId,
  actAs: [owner],
  commands: [
    { CreateCommand: { templateId: prepared.templateId, createArguments: prepared.createArguments(owner) } },
  ],
});

export async function prepare(
  client: JsonClient,
  token: () => string,
  options: {
    template?: { id: string; createArguments: unknown };
    acsContracts?: number;
    /** Contracts to move between synchronizers (submit-and-wait-for-reassignment). */
    reassignmentContracts?: number;
  },
  progress: (line: string) => void,
): Promise<Prepared> {
  const get = <T>(path: string) => client.json<T>("GET", path, token());
  const post = <T>(path: string, body: unknown, method = "POST") =>
    client.json<T>(method, path, token(), body);

  const { version } = await get<{ version: string }>("/v2/version");
  const { participantId } = await get<{ participantId: string }>("/v2/parties/participant-id");
  const server = {
    version,
    participantId,
    embeddedSandbox: isEmbeddedSandbox(participantId),
    ledgerJsonGateway: await servesGatewayOpenApi(client, token()),
  };
  const { user } = await get<{ user: { id: string } }>("/v2/authenticated-user");

  let templateId: string;
  let createArguments: (owner: string) => unknown;
  if (options.template) {
    const { id, createArguments: args } = options.template;
    templateId = id;
    createArguments = (owner) => withParty(args, owner);
  } else {
    const { packageIds } = await get<{ packageIds: string[] }>("/v2/packages");
    const preference = await get<{ packagePreference: { packageReference: { packageId: string } } | null }>(
      `/v2/interactive-submission/preferred-package-version?package-name=${SAMPLE_PACKAGE}`,
    ).catch(() => ({ packagePreference: null }));
    const id = preference.packagePreference?.packageReference.packageId;
    if (id === undefined || !packageIds.includes(id))
      throw new Error(
        `the server has no ${SAMPLE_PACKAGE} package (the sandbox's sample Iou): give --template and --create-arguments`,
      );
    templateId = `#${SAMPLE_PACKAGE}:Iou:Iou`;
    createArguments = (owner) => ({ issuer: owner, owner, currency: "LOAD", amount: "1.0", observers: [] });
  }

  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const prefix = `load-${stamp}-${randomBytes(3).toString("hex")}`;
  const allocate = async (hint: string) =>
    (
      await post<{ partyDetails: { party: string } }>("/v2/parties", {
        partyIdHint: hint,
        identityProviderId: "",
      })
    ).partyDetails.party;
  const party = await allocate(`${prefix}-party`);
  const acsParty = options.acsContracts ? await allocate(`${prefix}-acs`) : undefined;
  const rights = [party, ...(acsParty ? [acsParty] : [])].map((p) => ({
    kind: { CanActAs: { value: { party: p } } },
  }));
  const rightsPath = `/v2/users/${encodeURIComponent(user.id)}/rights`;
  await post(rightsPath, { userId: user.id, rights, identityProviderId: "" });
  progress(
    `prepared: parties ${prefix}-*, rights to act as them granted to user ${user.id}, template ${templateId}`,
  );

  const prepared: Prepared = {
    server,
    prefix,
    userId: user.id,
    party,
    ...(acsParty && { acsParty }),
    templateId,
    createArguments,
    ledgerEnd: 0,
    cleanUp: async () => {
      await post(rightsPath, { userId: user.id, rights, identityProviderId: "" }, "PATCH");
    },
  };
  try {
    if (acsParty) {
      const ledgerEnd = async () => (await get<{ offset: number }>("/v2/state/ledger-end")).offset;
      const beginExclusive = await ledgerEnd();
      await prepareContracts(prepared, options.acsContracts, post, progress);
      prepared.acsRange = {
        beginExclusive,
        endInclusive: await ledgerEnd(),
        transactions: options.acsContracts ?? 0,
      };
    }
    if (options.reassignmentContracts)
      prepared.reassignments = await reassignmentContracts(
        prepared,
        options.reassignmentContracts,
        get,
        post,
      );
    prepared.ledgerEnd = (await get<{ offset: number }>("/v2/state/ledger-end")).offset;
  } catch (error) {
    await prepared.cleanUp().catch(() => undefined);
    throw error;
  }
  return prepared;
}

/** The acs party's contracts, 8 submissions at a time. */
async function prepareContracts(
  prepared: Prepared,
  total: number | undefined,
  post: (path: string, body: unknown) => Promise<unknown>,
  progress: (line: string) => void,
): Promise<void> {
  const { acsParty, prefix } = prepared;
  if (acsParty && total) {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(8, total) }, async () => {
        while (next < total) {
          const i = next++;
          await post("/v2/commands/submit-and-wait", createCommand(prepared, `${prefix}-acs-${i}`, acsParty));
        }
      }),
    );
    progress(`prepared: ${total} contracts of the acs party`);
  }
}

/**
 * Contracts of the run's party to move, created 8 at a time; the participant must be connected to
 * two synchronizers (the contracts go between the first two it lists).
 */
async function reassignmentContracts(
  prepared: Prepared,
  total: number,
  get: <T>(path: string) => Promise<T>,
  post: <T>(path: string, body: unknown) => Promise<T>,
): Promise<ReassignmentPool> {
  const { connectedSynchronizers } = await get<{ connectedSynchronizers: { synchronizerId: string }[] }>(
    `/v2/state/connected-synchronizers?party=${encodeURIComponent(prepared.party)}`,
  );
  const [a, b] = connectedSynchronizers.map((s) => s.synchronizerId);
  if (a === undefined || b === undefined)
    throw new Error(
      `submit-and-wait-for-reassignment needs a participant connected to two synchronizers; this one has ${connectedSynchronizers.length}`,
    );
  const contracts: MovingContract[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(8, total) }, async () => {
      while (next < total) {
        const i = next++;
        const answer = await post<{
          transaction: { synchronizerId: string; events: { CreatedEvent: { contractId: string } }[] };
        }>("/v2/commands/submit-and-wait-for-transaction", {
          commands: createCommand(prepared, `${prepared.prefix}-moving-${i}`, prepared.party),
        });
        const created = answer.transaction.events[0]?.CreatedEvent;
        if (created)
          contracts.push({
            contractId: created.contractId,
            synchronizerId: answer.transaction.synchronizerId,
          });
      }
    }),
  );
  return new ReassignmentPool(contracts, [a, b]);
}
