import assert from "node:assert/strict";
import type { Stack } from "../../support/stack.js";
import { allocate, createIouTransaction, userFor } from "../ledger-client.js";

/** The victim and the attacker of the budget attacks: each party with a user that may only read it. */
export interface AliceAndBob {
  readonly alice: string;
  readonly bob: string;
  readonly aliceReader: string;
  readonly bobReader: string;
  /** The contract id of alice's Iou, which nothing of bob's may show. */
  readonly aliceIou: string;
}

/** Allocates alice and bob, their readers, and an Iou of alice's (and, with `bobIou`, one of bob's). */
export async function aliceAndBob(stack: Stack, options: { bobIou?: true } = {}): Promise<AliceAndBob> {
  const alice = await allocate(stack, "alice");
  const bob = await allocate(stack, "bob");
  const aliceReader = await userFor(stack, "alice-reader", [], [alice]);
  const bobReader = await userFor(stack, "bob-reader", [], [bob]);
  const iou = { currency: "EUR", amount: "100" };
  const aliceWriter = await userFor(stack, "alice-writer", [alice]);
  const created = await createIouTransaction(stack, aliceWriter, "alice-iou", {
    issuer: alice,
    owner: alice,
    ...iou,
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  if (options.bobIou) {
    const bobWriter = await userFor(stack, "bob-writer", [bob]);
    const bobs = await createIouTransaction(stack, bobWriter, "bob-iou", { issuer: bob, owner: bob, ...iou });
    assert.equal(bobs.status, 200, JSON.stringify(bobs.body));
  }
  const aliceIou = created.body.transaction.events[0].CreatedEvent.contractId as string;
  return { alice, bob, aliceReader, bobReader, aliceIou };
}
