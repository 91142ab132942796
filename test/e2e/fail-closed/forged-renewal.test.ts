import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { signToken } from "../../jwt/test-tokens.js";
import { type Stack, startStack } from "../../support/stack.js";
import { until } from "../../support/until.js";
import { partyFilter, updatesRequest } from "../../support/update-requests.js";
import { call, iouCommitter } from "../ledger-client.js";
import { updateIds, type WatchedSocket, watchedSocket } from "./watched-socket.js";

const SECRET = "the-gateway-checks-this-secret";
/** The genuine token's lifetime: the stream must end with it. */
const LIFETIME_S = 8;
/** Room for a loaded machine past the genuine token's expiry. */
const SLACK_MS = 10_000;

const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;
const signed = (user: string, exp = inSeconds(600)) => signToken(user, { key: SECRET, exp });

/**
 * Issue 35, attack 4: a renewal frame skips the gateway's own token check.
 *
 * The attack: the gateway verifies tokens itself (`--auth.mode hs256`) in front of a ledger that
 * does not verify signatures (the unsafe sandbox). A forged token (another key's signature, no
 * `exp`, the same `sub`) is refused 401 over HTTP and at the upgrade, but a renewal frame carrying
 * it is only asked of the ledger, which admits it: the stream takes it on and outlives its genuine
 * 8-second token for ever.
 *
 * The fixed gateway: a renewal token goes through the gateway's own verifier as at the upgrade.
 * The forged one gets a renewal-refused error frame, the stream keeps its genuine token and ends at
 * that token's expiry with ACCESS_TOKEN_EXPIRED.
 *
 * On 9c6ba21 it fails: the renewal is accepted, no frame refuses it, and the stream is still open
 * and delivering transactions committed after the genuine token expired.
 */
describe("fail closed: a forged token in a renewal frame, with the gateway verifying tokens", () => {
  let stack: Stack;
  let party: string;
  let writer: string;
  const opened: WatchedSocket[] = [];

  before(async () => {
    stack = await startStack(["--auth.mode", "hs256", "--auth.secret", SECRET]);
    const admin = signed("participant_admin");
    const allocated = await call<{ partyDetails: { party: string } }>(
      stack,
      "POST",
      "/v2/parties",
      { partyIdHint: "forged" },
      admin,
    );
    assert.equal(allocated.status, 200, JSON.stringify(allocated.body));
    party = allocated.body.partyDetails.party;
    for (const [id, kind] of [
      ["forged-writer", "CanActAs"],
      ["renewer", "CanReadAs"],
    ] as const) {
      const rights = [{ kind: { [kind]: { value: { party } } } }];
      const created = await call(stack, "POST", "/v2/users", { user: { id }, rights }, admin);
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    writer = signed("forged-writer");
  });
  after(async () => {
    for (const socket of opened) socket.close();
    await stack.stop();
  });

  /** One transaction of the party's: its update id, and when it was asked for. */
  const commit = iouCommitter(
    () => stack,
    () => writer,
    () => party,
    "forged",
  );

  it("refuses the forged renewal and ends the stream at its genuine token's expiry", {
    timeout: 90_000,
  }, async () => {
    const expiresAt = inSeconds(LIFETIME_S) * 1000;
    const genuine = signed("renewer", expiresAt / 1000);
    const forged = signToken("renewer", { key: "not-the-gateway-secret", exp: null });
    const refusedOverHttp = await call(stack, "GET", "/v2/state/ledger-end", undefined, forged);
    assert.equal(refusedOverHttp.status, 401, "the gateway refuses the forged token over HTTP");

    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, genuine))
      .body.offset;
    const stream = watchedSocket(stack.url, genuine, updatesRequest(partyFilter(party), end));
    opened.push(stream);
    const first = await commit();
    await until(() => updateIds(stream).includes(first.updateId), { observed: () => `${stream}` });

    stream.send(JSON.stringify({ token: forged }));
    // The party goes on committing until the stream ends, or well past the genuine expiry.
    const later: { updateId: string; at: number }[] = [];
    while (stream.closedWith === undefined && Date.now() < expiresAt + SLACK_MS) {
      later.push(await commit());
      await new Promise((resolve) => setTimeout(resolve, 500));
    }

    const afterExpiry = later.filter((tx) => tx.at > expiresAt && updateIds(stream).includes(tx.updateId));
    assert.equal(
      afterExpiry.length,
      0,
      `the stream delivered ${afterExpiry.length} transaction(s) committed after its genuine token expired (socket ${stream.closedWith === undefined ? "still open" : `closed ${stream.closedWith}`}): the forged renewal was taken; frames other than elements: ${JSON.stringify(stream.errors())}`,
    );
    assert.ok(
      stream.closedWith !== undefined,
      `still open ${SLACK_MS} ms past the genuine expiry: ${stream}`,
    );
    const [refusal, ...rest] = stream.errors();
    assert.equal(refusal?.context?.token_renewal, "refused", `no renewal-refused frame: ${stream}`);
    assert.deepEqual(
      rest.map((frame) => frame.code),
      ["ACCESS_TOKEN_EXPIRED"],
      `the stream's end: ${stream}`,
    );
  });
});
