import { ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";
import { decodeStatusDetails, STATUS_DETAILS_KEY } from "../../src/proto/status-details.js";
import { MAX_ERROR_CONTENT_BYTES } from "../../src/sandbox/error-budget.js";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { bearer, serviceClient, token } from "./sandbox-client.js";

const EVENTS = "com.daml.ledger.api.v2.EventQueryService";
const USERS = "com.daml.ledger.api.v2.admin.UserManagementService";
const PARTIES = "com.daml.ledger.api.v2.admin.PartyManagementService";
const VERSION = "com.daml.ledger.api.v2.VersionService";

/** A unary call with a deadline: a wedged connection fails the test instead of hanging it. */
function callWithin<Res>(client: grpc.Client, service: string, method: string, request: object, jwt: string) {
  const definition = ledgerApiProtos().service(service)[method] as grpc.MethodDefinition<object, Res>;
  return new Promise<Res>((resolve, reject) =>
    client.makeUnaryRequest(
      definition.path,
      definition.requestSerialize,
      definition.responseDeserialize,
      request,
      bearer(jwt),
      { deadline: Date.now() + 10_000 },
      (error, response) => (error ? reject(error) : resolve(response as Res)),
    ),
  );
}

describe("sandbox errors stay within Canton's size budget", () => {
  let sandbox: RunningSandbox;
  let client: grpc.Client;
  let party: string;
  let reader: string;
  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    const parties = serviceClient(sandbox.port, PARTIES);
    const users = serviceClient(sandbox.port, USERS);
    const allocated = await parties.AllocateParty!<{ partyDetails: { party: string } }>({
      partyIdHint: "alice",
    });
    party = allocated.partyDetails.party;
    await users.CreateUser!({
      user: { id: "reader", primaryParty: party },
      rights: [{ canReadAs: { party } }],
    });
    parties.close();
    users.close();
    reader = token("reader");
    client = new grpc.Client(`127.0.0.1:${sandbox.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await sandbox.stop();
  });

  it("answers a 100,000-character contract id with a status of at most 4096 bytes, and the connection keeps serving", async () => {
    const contractId = `00${"a".repeat(100_000)}`;
    const request = { contractId, eventFormat: { filtersByParty: { [party]: {} } } };
    const error = await callWithin(client, EVENTS, "GetEventsByContractId", request, reader).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    ok(error, "the lookup must fail");
    strictEqual(error.code, grpc.status.NOT_FOUND);
    const raw = error.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer;
    ok(raw.length <= MAX_ERROR_CONTENT_BYTES, `status of ${raw.length} bytes`);
    const status = decodeStatusDetails(error.metadata);
    strictEqual(status?.errorInfos[0]?.reason, "CONTRACT_EVENTS_NOT_FOUND");
    // Canton drops a resource that does not fit rather than cutting it.
    strictEqual(status?.resourceInfos.length, 0);
    // The same connection (one HTTP/2 session) still answers.
    const version = await callWithin<{ version: string }>(
      client,
      VERSION,
      "GetLedgerApiVersion",
      {},
      token(),
    );
    strictEqual(typeof version.version, "string");
  });

  it("keeps a short resource as it is", async () => {
    const contractId = `00${"b".repeat(64)}`;
    const request = { contractId, eventFormat: { filtersByParty: { [party]: {} } } };
    const error = await callWithin(client, EVENTS, "GetEventsByContractId", request, reader).catch(
      (e: grpc.ServiceError) => e,
    );
    const status = decodeStatusDetails((error as grpc.ServiceError).metadata);
    strictEqual(status?.resourceInfos[0]?.resourceName, contractId);
  });
});
