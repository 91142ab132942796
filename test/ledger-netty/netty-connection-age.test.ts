import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type RunningSandbox, startSandbox } from "../../src/sandbox/sandbox.js";
import { type NettyLedger, nettyLedgerBuild, startNettyLedger } from "../support/netty-ledger.js";
import { GET_LEDGER_API_VERSION, rawCall, rawSession } from "../support/raw-grpc.js";
import { tokenFor } from "../support/tokens.js";

const build = await nettyLedgerBuild();

/**
 * A max connection age, as load balancers and service meshes set one, on the Netty ledger: what
 * a client sees at the HTTP/2 level, for the gateway's handling of graceful GOAWAY (issue 20
 * item 3) to be tested against.
 */
describe("the Netty ledger with a max connection age of 2 s and a grace of 1 s", {
  skip: "skip" in build ? build.skip : false,
}, () => {
  let sandbox: RunningSandbox;
  let netty: NettyLedger;

  before(async () => {
    sandbox = await startSandbox({ port: 0 });
    netty = await startNettyLedger({
      backendPort: sandbox.port,
      maxConnectionAgeSeconds: 2,
      maxConnectionAgeGraceSeconds: 1,
    });
  });
  after(async () => {
    await netty?.stop();
    await sandbox?.stop();
  });

  it("sends GOAWAY NO_ERROR 'max_age' after about 2 s, lets a stream finish within the grace, and cancels the one still open when it ends", async () => {
    const raw = rawSession(netty.port);
    const finishing = rawCall(raw.session, GET_LEDGER_API_VERSION, { token: tokenFor() });
    const lingering = rawCall(raw.session, GET_LEDGER_API_VERSION, { token: tokenFor() });

    const goaway = await raw.goaway;
    // grpc-java draws the age within ±10% of the configured one.
    assert.ok(goaway.atMs >= 1_800, `GOAWAY after ${goaway.atMs} ms`);
    assert.deepEqual(
      { code: goaway.code, lastStreamId: goaway.lastStreamId, debug: goaway.debug },
      { code: 0, lastStreamId: 2 ** 31 - 1, debug: "max_age" },
    );
    finishing.stream.end();
    const finished = await finishing.ended;
    assert.equal(finished.grpcStatus, "0", `the stream ended within the grace: ${JSON.stringify(finished)}`);

    const cut = await lingering.ended;
    assert.equal(cut.rstCode, 8, `the stream open past the grace was cancelled: ${JSON.stringify(cut)}`);
    assert.equal(cut.grpcStatus, undefined);
    assert.equal(await raw.closed, undefined, "the connection closed without an error");
    // After a PING round trip, a second GOAWAY names the last stream it accepted.
    assert.deepEqual(
      raw.goaways.map(({ code, lastStreamId, debug }) => ({ code, lastStreamId, debug })),
      [
        { code: 0, lastStreamId: 2 ** 31 - 1, debug: "max_age" },
        { code: 0, lastStreamId: 3, debug: "max_age" },
      ],
    );
  });
});
