import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { ledgerApiProtos } from "../../../src/proto/ledger-api-protos.js";
import { bearer, rejection, serviceClient } from "../sandbox-client.js";
import {
  createdOf,
  createIou,
  LEDGER_SERVICES,
  type LedgerFixture,
  ledgerFixture,
  type Msg,
  readStream,
  submitTx,
  wildcard,
} from "./ledger-fixture.js";

const PRUNING = "com.daml.ledger.api.v2.admin.ParticipantPruningService";

describe("sandbox ledger: topology events", () => {
  let f: LedgerFixture;
  before(async () => {
    f = await ledgerFixture();
  });
  after(() => f.close());

  const topologyUpdates = (begin: number, parties: string[]) =>
    readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: String(begin),
      endInclusive: String(f.sandbox.store.ledgerEnd()),
      updateFormat: { includeTopologyEvents: { includeParticipantAuthorizationEvents: { parties } } },
    });

  it("shows allocation, hosting on the other synchronizer, a permission change, onboarding and revocation", async () => {
    const [sync1, sync2] = f.sandbox.store.synchronizerIds as [string, string];
    const participantId = f.sandbox.store.participant.participantId;
    const start = f.sandbox.store.ledgerEnd();
    const party = (await f.parties.AllocateParty!<Msg>({ partyIdHint: "mover", synchronizerId: sync1 }))
      .partyDetails.party;
    const other = await f.allocate("bystander");
    await f.parties.AllocateParty!({ partyIdHint: "mover", synchronizerId: sync2 });
    f.sandbox.store.hostParty(party, sync2, "PARTICIPANT_PERMISSION_OBSERVATION");
    f.sandbox.store.hostParty(party, sync2, "PARTICIPANT_PERMISSION_OBSERVATION", true);
    f.sandbox.store.revokeParty(party, sync1);
    const seen = await topologyUpdates(start, [party]);
    deepStrictEqual(
      seen.map((m: Msg) => {
        const t = m.topologyTransaction;
        const event = t.events[0];
        const body = event[event.event];
        return [t.synchronizerId, event.event, body.partyId, body.participantId, body.participantPermission];
      }),
      [
        [sync1, "participantAuthorizationAdded", party, participantId, "PARTICIPANT_PERMISSION_SUBMISSION"],
        [sync2, "participantAuthorizationAdded", party, participantId, "PARTICIPANT_PERMISSION_SUBMISSION"],
        [
          sync2,
          "participantAuthorizationChanged",
          party,
          participantId,
          "PARTICIPANT_PERMISSION_OBSERVATION",
        ],
        [
          sync2,
          "participantAuthorizationOnboarding",
          party,
          participantId,
          "PARTICIPANT_PERMISSION_OBSERVATION",
        ],
        [sync1, "participantAuthorizationRevoked", party, participantId, undefined],
      ],
    );
    const all = await topologyUpdates(start, []);
    strictEqual(all.length, 6, "an empty party filter shows every party's events");
    strictEqual(
      all.some((m: Msg) => m.topologyTransaction.events[0].participantAuthorizationAdded?.partyId === other),
      true,
    );
    const none = await readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: String(start),
      endInclusive: String(f.sandbox.store.ledgerEnd()),
      updateFormat: {
        includeTransactions: {
          eventFormat: wildcard([party]),
          transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
        },
      },
    });
    deepStrictEqual(none, [], "no topology events unless the format asks for them");
  });
});

describe("sandbox ledger: pruning", () => {
  let f: LedgerFixture;
  let pruning: ReturnType<typeof serviceClient>;
  before(async () => {
    f = await ledgerFixture();
    pruning = serviceClient(f.sandbox.port, PRUNING);
  });
  after(async () => {
    pruning.close();
    await f.close();
  });

  it("prunes up to an offset: reads below fail with PARTICIPANT_PRUNED_DATA_ACCESSED, reads above and the ACS work", async () => {
    const bank = await f.allocate("bank");
    const first = await submitTx(f, [bank], [createIou(bank, bank, "1")]);
    const second = await submitTx(f, [bank], [createIou(bank, bank, "2")]);
    const prunedAt = Number(first.offset);

    const zero = await rejection(pruning.Prune!({ pruneUpTo: "0" }));
    strictEqual(zero.status.errorInfos[0]?.reason, "NON_POSITIVE_OFFSET");
    await pruning.Prune!({ pruneUpTo: String(prunedAt) });
    deepStrictEqual(await f.state.GetLatestPrunedOffsets!({}), {
      participantPrunedUpToInclusive: String(prunedAt),
      allDivulgedContractsPrunedUpToInclusive: String(prunedAt),
    });

    const updateFormat = {
      includeTransactions: { eventFormat: wildcard([bank]), transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
    };
    const below = await rejection(
      readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
        beginExclusive: String(prunedAt - 1),
        updateFormat,
      }),
    );
    strictEqual(below.code, grpc.status.FAILED_PRECONDITION);
    strictEqual(below.status.errorInfos[0]?.reason, "PARTICIPANT_PRUNED_DATA_ACCESSED");
    strictEqual(below.status.errorInfos[0]?.metadata.earliest_offset, String(prunedAt));
    match(
      below.details,
      new RegExp(`Updates request from ${prunedAt} to ${second.offset} precedes pruned offset ${prunedAt}`),
    );
    const probe = await rejection(
      readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
        beginExclusive: String(prunedAt - 1),
        endInclusive: String(prunedAt - 1),
        updateFormat,
      }),
    );
    strictEqual(probe.status.errorInfos[0]?.reason, "PARTICIPANT_PRUNED_DATA_ACCESSED", "an empty range too");
    const from = await readStream(f.sandbox.port, LEDGER_SERVICES.update, "GetUpdates", {
      beginExclusive: String(prunedAt),
      endInclusive: String(second.offset),
      updateFormat,
    });
    deepStrictEqual(
      from.map((m: Msg) => m.transaction.offset),
      [second.offset],
    );
    const pageBelow = await rejection(
      f.update.GetUpdatesPage!({ beginOffsetExclusive: String(prunedAt - 1), updateFormat }),
    );
    strictEqual(pageBelow.status.errorInfos[0]?.reason, "PARTICIPANT_PRUNED_DATA_ACCESSED");
    const firstPage = await f.update.GetUpdatesPage!<Msg>({ updateFormat });
    deepStrictEqual(
      [firstPage.lowestPageOffsetExclusive, firstPage.updates.map((u: Msg) => u.transaction.offset)],
      [String(prunedAt), [second.offset]],
      "without a begin, the first page starts after the pruned history",
    );
    const completions = await rejection(
      readStream(f.sandbox.port, LEDGER_SERVICES.completion, "CompletionStream", {
        userId: "alice-app",
        parties: [bank],
        beginExclusive: "0",
      }),
    );
    match(completions.details, /Command completions request from 1 to \d+ overlaps with pruned offset/);
    const lookup = await rejection(f.update.GetUpdateByOffset!({ offset: String(prunedAt), updateFormat }));
    strictEqual(lookup.status.errorInfos[0]?.reason, "UPDATE_NOT_FOUND");

    const acs = await readStream(
      f.sandbox.port,
      "com.daml.ledger.api.v2.StateService",
      "GetActiveContracts",
      {
        activeAtOffset: String(second.offset),
        eventFormat: wildcard([bank]),
      },
    );
    deepStrictEqual(
      acs.map((e: Msg) => e.activeContract.createdEvent.contractId),
      [createdOf(first)[0].contractId, createdOf(second)[0].contractId],
      "the contract created in the pruned history is still active",
    );
    const oldAcs = await rejection(
      readStream(f.sandbox.port, "com.daml.ledger.api.v2.StateService", "GetActiveContracts", {
        activeAtOffset: String(prunedAt - 1),
        eventFormat: wildcard([bank]),
      }),
    );
    match(
      oldAcs.details,
      new RegExp(`Active contracts request at offset ${prunedAt - 1} precedes pruned offset ${prunedAt}`),
    );
  });
});

describe("sandbox ledger: pruning under a stream that lags behind", () => {
  let f: LedgerFixture;
  before(async () => {
    // Far more bytes than the HTTP/2 windows hold: a paused reader keeps the stream behind.
    f = await ledgerFixture({ preload: { ticks: 2000, payloadBytes: 8192 } });
  });
  after(() => f.close());

  it("fails a stream whose next update was pruned meanwhile, instead of skipping it", async () => {
    const party = f.sandbox.preloaded!.party;
    const Client = ledgerApiProtos().client(LEDGER_SERVICES.update);
    const client = new Client(`127.0.0.1:${f.sandbox.port}`, grpc.credentials.createInsecure());
    const call = (
      client as unknown as Record<string, (r: object, m: grpc.Metadata) => grpc.ClientReadableStream<Msg>>
    ).GetUpdates!.call(
      client,
      {
        beginExclusive: "0",
        // Bounded: without the pruning check it would simply end after every update.
        endInclusive: String(f.sandbox.store.ledgerEnd()),
        updateFormat: {
          includeTransactions: {
            eventFormat: wildcard([party]),
            transactionShape: "TRANSACTION_SHAPE_ACS_DELTA",
          },
        },
      },
      bearer(),
    );
    const pruning = serviceClient(f.sandbox.port, PRUNING);
    const end = f.sandbox.store.ledgerEnd();
    let received = 0;
    const outcome = new Promise<grpc.ServiceError | undefined>((resolve) => {
      call.on("data", () => {
        received += 1;
        if (received === 1) {
          call.pause();
          void pruning.Prune!({ pruneUpTo: String(end) }).then(() => call.resume());
        }
      });
      call.on("error", resolve);
      call.on("end", () => resolve(undefined));
    });
    const error = await outcome.finally(() => {
      pruning.close();
      client.close();
    });
    strictEqual(error?.code, grpc.status.FAILED_PRECONDITION, `ended after ${received} updates`);
    match(
      error.details,
      new RegExp(
        `^PARTICIPANT_PRUNED_DATA_ACCESSED.*Updates request from \\d+ to ${end} precedes pruned offset ${end}`,
      ),
    );
    strictEqual(received < 2000, true, "the pruned updates were not delivered");
  });
});
