import { createHash, randomBytes } from "node:crypto";
import type { JsonClient } from "./json-client.js";
import { type MovingContract, ReassignmentPool } from "./reassignment-pool.js";
import type { Actor } from "./workflows/workflow-runner.js";

/**
 * What a run needs on the server, made through the JSON Ledger API. Given existing parties
 * (`--party`), it acts as them with their tokens and makes no admin call: no party allocated, no
 * right granted (the acs scenarios' contracts, if any, are created as the first party). Else, with
 * the run's token (a user with participant_admin): parties of its own (and one holding the acs
 * scenario's contracts), named with a unique run prefix; the rights to act as them, granted to the
 * token's own user (the tool cannot mint tokens for a user it would create) and revoked at the
 * end. Parties and contracts stay: the Ledger API deletes neither. Nothing the run did not create
 * is touched.
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
  /** The first actor's user and party: the built-in request scenarios' and the streams'. */
  userId: string;
  party: string;
  /** Every party the run acts as, with its token and user: the workflows take them in turn. */
  actors: Actor[];
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
    /** Existing parties to act as, each with its token: nothing is allocated or granted. */
    parties?: { party: string; token: () => string }[];
    /** Without `parties`: how many to allocate (the first is the built-in scenarios'). */
    prepareParties?: number;
    /**
     * Whether the run creates the sample Iou (a built-in command scenario or Iou workflow, the acs
     * scenarios' contracts): a run of a scenario file alone needs no sample package on the server.
     */
    createsSampleIous?: boolean;
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
  } else if (options.createsSampleIous === false) {
    templateId = `#${SAMPLE_PACKAGE}:Iou:Iou`;
    createArguments = () => {
      throw new Error("this run creates no sample Iou");
    };
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
  let actors: Actor[];
  let acsParty: string | undefined;
  let cleanUp = async () => {};
  if (options.parties) {
    // Least privilege: each party's own token says which user submits as it; no admin call.
    const users = new Map<string, string>();
    actors = [];
    for (const { party, token: partyToken } of options.parties) {
      const bearer = partyToken();
      let userId = users.get(bearer);
      if (userId === undefined) {
        userId = (await client.json<{ user: { id: string } }>("GET", "/v2/authenticated-user", bearer)).user
          .id;
        users.set(bearer, userId);
      }
      actors.push({ party, token: partyToken, userId });
    }
    acsParty = options.acsContracts ? actors[0]?.party : undefined;
    progress(
      `prepared: acting as ${actors.map((a) => `${a.party} (user ${a.userId})`).join(", ")}, no admin call; template ${templateId}`,
    );
  } else {
    const parties = [await allocate(`${prefix}-party`)];
    for (let i = 2; i <= (options.prepareParties ?? 1); i++)
      parties.push(await allocate(`${prefix}-party-${i}`));
    acsParty = options.acsContracts ? await allocate(`${prefix}-acs`) : undefined;
    const rights = [...parties, ...(acsParty ? [acsParty] : [])].map((p) => ({
      kind: { CanActAs: { value: { party: p } } },
    }));
    const rightsPath = `/v2/users/${encodeURIComponent(user.id)}/rights`;
    await post(rightsPath, { userId: user.id, rights, identityProviderId: "" });
    cleanUp = async () => {
      await post(rightsPath, { userId: user.id, rights, identityProviderId: "" }, "PATCH");
    };
    actors = parties.map((party) => ({ party, token, userId: user.id }));
    progress(
      `prepared: parties ${prefix}-*, rights to act as them granted to user ${user.id}, template ${templateId}`,
    );
  }
  const [first] = actors as [Actor];

  const prepared: Prepared = {
    server,
    prefix,
    userId: first.userId,
    party: first.party,
    actors,
    ...(acsParty && { acsParty }),
    templateId,
    createArguments,
    ledgerEnd: 0,
    cleanUp,
  };
  // What the run creates beforehand, it creates as the first party, with that party's token.
  const getAsFirst = <T>(path: string) => client.json<T>("GET", path, first.token());
  const postAsFirst = <T>(path: string, body: unknown) => client.json<T>("POST", path, first.token(), body);
  try {
    if (acsParty) {
      const ledgerEnd = async () => (await get<{ offset: number }>("/v2/state/ledger-end")).offset;
      const beginExclusive = await ledgerEnd();
      await prepareContracts(prepared, options.acsContracts, postAsFirst, progress);
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
        getAsFirst,
        postAsFirst,
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
