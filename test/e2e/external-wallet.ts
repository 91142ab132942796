import assert from "node:assert/strict";
import type { Wallet } from "../sandbox/interactive/wallet.js";
import type { Stack } from "../support/stack.js";
import { call } from "./ledger-client.js";

/** crypto.proto messages in their JSON form: bytes as base64. */
export const jsonKey = (wallet: Wallet) => ({
  ...wallet.publicKey,
  keyData: wallet.publicKey.keyData.toString("base64"),
});

export const jsonSignature = (wallet: Wallet, data: Buffer) => {
  const signature = wallet.sign(data);
  return { ...signature, signature: signature.signature.toString("base64") };
};

/**
 * Onboards `wallet`'s external party on `synchronizer` through the JSON API (generate-topology,
 * then allocate with the wallet's signature of the multi-hash) for `userId`; answers the party id
 * generate-topology named and allocate's answer.
 */
export async function onboardExternalParty(
  stack: Stack,
  wallet: Wallet,
  synchronizer: string,
  partyHint: string,
  userId: string,
): Promise<{ party: string; allocated: Record<string, unknown> }> {
  const topology = await call<{ partyId: string; topologyTransactions: string[]; multiHash: string }>(
    stack,
    "POST",
    "/v2/parties/external/generate-topology",
    {
      synchronizer,
      partyHint,
      publicKey: jsonKey(wallet),
    },
  );
  assert.equal(topology.status, 200, JSON.stringify(topology.body));
  const allocated = await call(stack, "POST", "/v2/parties/external/allocate", {
    synchronizer,
    onboardingTransactions: topology.body.topologyTransactions.map((transaction: string) => ({
      transaction,
    })),
    multiHashSignatures: [jsonSignature(wallet, Buffer.from(topology.body.multiHash, "base64"))],
    userId,
  });
  assert.equal(allocated.status, 200, JSON.stringify(allocated.body));
  return { party: topology.body.partyId, allocated: allocated.body };
}
