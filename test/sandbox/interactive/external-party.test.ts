import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { createIou, type LedgerFixture, ledgerFixture, type Msg } from "../ledger/ledger-fixture.js";
import { rejection, serviceClient } from "../sandbox-client.js";
import { ed25519Wallet, p256Wallet, topologyMultiHash, type Wallet } from "./wallet.js";

describe("sandbox external parties (GenerateExternalPartyTopology, AllocateExternalParty)", () => {
  let f: LedgerFixture;
  let users: ReturnType<typeof serviceClient>;
  let synchronizer: string;
  before(async () => {
    f = await ledgerFixture();
    users = serviceClient(f.sandbox.port, "com.daml.ledger.api.v2.admin.UserManagementService");
    synchronizer = f.sandbox.store.synchronizers[0]!.id;
    await users.CreateUser!({ user: { id: "wallet-user", primaryParty: "" }, rights: [] });
  });
  after(async () => {
    users.close();
    await f.close();
  });

  const generate = (wallet: Wallet, partyHint: string): Promise<Msg> =>
    f.parties.GenerateExternalPartyTopology!({ synchronizer, partyHint, publicKey: wallet.publicKey });

  it("proposes party hint::fingerprint with one PartyToParticipant and its multi-hash", async () => {
    const wallet = ed25519Wallet();
    const topology = await generate(wallet, "alice");
    strictEqual(topology.partyId, `alice::${wallet.fingerprint}`);
    strictEqual(topology.publicKeyFingerprint, wallet.fingerprint);
    strictEqual(topology.topologyTransactions.length, 1);
    deepStrictEqual(topology.multiHash, topologyMultiHash(topology.topologyTransactions));
  });

  for (const [name, makeWallet] of [
    ["Ed25519", ed25519Wallet],
    ["ECDSA P-256", p256Wallet],
  ] as const) {
    it(`allocates an ${name} party signed over the multi-hash, hosted to confirm, and grants the user act_as`, async () => {
      const wallet = makeWallet();
      const topology = await generate(wallet, `w${name.length}`);
      const response: Msg = await f.parties.AllocateExternalParty!({
        synchronizer,
        onboardingTransactions: topology.topologyTransactions.map((transaction: Buffer) => ({ transaction })),
        multiHashSignatures: [wallet.sign(topology.multiHash)],
        userId: "wallet-user",
      });
      strictEqual(response.partyId, topology.partyId);
      strictEqual(
        f.sandbox.store.party(topology.partyId)?.permissions.get(synchronizer),
        "PARTICIPANT_PERMISSION_CONFIRMATION",
      );
      const rights: Msg = await users.ListUserRights!({ userId: "wallet-user" });
      ok(rights.rights.some((r: Msg) => r.canActAs?.party === topology.partyId));
    });
  }

  it("allocates with a signature on the transaction itself instead of the multi-hash", async () => {
    const wallet = ed25519Wallet();
    const topology = await generate(wallet, "pertx");
    const [transaction] = topology.topologyTransactions as Buffer[];
    const { createHash } = await import("node:crypto");
    const hash = Buffer.concat([
      Buffer.from([0x12, 0x20]),
      createHash("sha256")
        .update(Buffer.from([0, 0, 0, 11]))
        .update(transaction!)
        .digest(),
    ]);
    const response: Msg = await f.parties.AllocateExternalParty!({
      synchronizer,
      onboardingTransactions: [{ transaction, signatures: [wallet.sign(hash)] }],
    });
    strictEqual(response.partyId, topology.partyId);
  });

  it("refuses a wrong signature and a missing one with Canton's (redacted) topology alarms", async () => {
    const wallet = ed25519Wallet();
    const topology = await generate(wallet, "bad");
    const onboardingTransactions = topology.topologyTransactions.map((transaction: Buffer) => ({
      transaction,
    }));
    const wrong = wallet.sign(Buffer.from("something else"));
    const invalid = await rejection(
      f.parties.AllocateExternalParty!({
        synchronizer,
        onboardingTransactions,
        multiHashSignatures: [wrong],
      }),
    );
    strictEqual(invalid.code, grpc.status.INVALID_ARGUMENT);
    match(invalid.details, /An error occurred\. Please contact the operator/);
    const unsigned = await rejection(
      f.parties.AllocateExternalParty!({ synchronizer, onboardingTransactions }),
    );
    strictEqual(unsigned.code, grpc.status.INVALID_ARGUMENT);
    const stranger = ed25519Wallet();
    const byStranger = await rejection(
      f.parties.AllocateExternalParty!({
        synchronizer,
        onboardingTransactions,
        multiHashSignatures: [stranger.sign(topology.multiHash)],
      }),
    );
    strictEqual(byStranger.code, grpc.status.INVALID_ARGUMENT);
    strictEqual(f.sandbox.store.party(topology.partyId), undefined);
  });

  it("refuses plain command submission for an external party (it signs its own transactions)", async () => {
    const wallet = ed25519Wallet();
    const topology = await generate(wallet, "plain");
    await f.parties.AllocateExternalParty!({
      synchronizer,
      onboardingTransactions: topology.topologyTransactions.map((transaction: Buffer) => ({ transaction })),
      multiHashSignatures: [wallet.sign(topology.multiHash)],
    });
    const party = topology.partyId as string;
    const failure = await rejection(
      f.command.SubmitAndWait!({
        commands: {
          commandId: "plain-1",
          userId: "wallet-user",
          actAs: [party],
          commands: [createIou(party, party, "1")],
        },
      }),
    );
    strictEqual(failure.code, grpc.status.NOT_FOUND);
    strictEqual(failure.status.errorInfos[0]?.reason, "NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT");
  });

  it("refuses a topology request with an unknown synchronizer or an empty hint as invalid arguments", async () => {
    const wallet = ed25519Wallet();
    const unknown = await rejection(
      f.parties.GenerateExternalPartyTopology!({
        synchronizer: "nope::1220ab",
        partyHint: "x",
        publicKey: wallet.publicKey,
      }),
    );
    strictEqual(unknown.status.errorInfos[0]?.reason, "INVALID_ARGUMENT");
    const empty = await rejection(generate(wallet, ""));
    match(empty.details, /Party hint is empty/);
  });
});
