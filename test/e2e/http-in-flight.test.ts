import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { RawConnection } from "../http/raw-http.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { stackWithInFlight } from "../support/stack-in-flight.js";
import { waitFor } from "../support/transport-harness.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate, userFor } from "./ledger-client.js";

/** The framing header of a POST whose body stops short, and the part of the body sent. */
const UNFINISHED = {
  contentLength: ["Content-Length: 100", '{"us'],
  chunked: ["Transfer-Encoding: chunked", '3\r\n{"u\r\n'],
} as const;

/** Opens a connection and sends a POST /v2/users whose body never finishes. */
async function sendUnfinished(stack: Stack, framing: keyof typeof UNFINISHED): Promise<RawConnection> {
  const [header, body] = UNFINISHED[framing];
  const connection = await RawConnection.open(stack.gateway.port);
  connection.write(
    `POST /v2/users HTTP/1.1\r\nHost: 127.0.0.1:${stack.gateway.port}\r\nAuthorization: Bearer ${stack.token}\r\n${header}\r\n\r\n${body}`,
  );
  return connection;
}

describe("requests in flight whose client leaves mid-body (raw TCP)", () => {
  // The default body read timeout (60 s) is far beyond these waits: the client's leaving settles them.
  const { stack, inFlight } = stackWithInFlight(["--server.body-read-timeout", "60s"]);

  it("settles a request whose client leaves before its Content-Length arrived", async () => {
    const connection = await sendUnfinished(stack(), "contentLength");
    await waitFor("the request to be in flight", () => inFlight() === 1);
    connection.destroy();
    await waitFor("the in-flight gauge back to 0", () => inFlight() === 0);
  });

  it("settles a request whose client leaves in the middle of a chunked body", async () => {
    const connection = await sendUnfinished(stack(), "chunked");
    await waitFor("the request to be in flight", () => inFlight() === 1);
    connection.destroy();
    await waitFor("the in-flight gauge back to 0", () => inFlight() === 0);
  });
});

describe("requests in flight whose body never finishes (raw TCP)", () => {
  const { stack, inFlight } = stackWithInFlight(["--server.body-read-timeout", "1s"]);

  it("answers 408 and closes when a chunked body does not finish within server.body-read-timeout", async () => {
    const connection = await sendUnfinished(stack(), "chunked");
    await connection.untilResponses(1);
    const [response] = connection.responses();
    assert.equal(response?.status, 408);
    assert.equal(JSON.parse(response?.body ?? "{}").code, "REQUEST_BODY_TIMEOUT");
    await connection.untilClosed();
    await waitFor("the in-flight gauge back to 0", () => inFlight() === 0);
  });

  it("answers 408 and closes when fewer bytes than the Content-Length arrive in time", async () => {
    const connection = await sendUnfinished(stack(), "contentLength");
    await connection.untilResponses(1);
    assert.equal(connection.responses()[0]?.status, 408);
    await connection.untilClosed();
    await waitFor("the in-flight gauge back to 0", () => inFlight() === 0);
  });
});

describe("a client that leaves a waiting list twin", () => {
  let stack: Stack;
  let reader: string;
  let party: string;
  const gatewayLog = capturingLogger();
  before(async () => {
    stack = await startStack([], {}, { gatewayLog: gatewayLog.log });
    party = await allocate(stack, "leaver");
    reader = await userFor(stack, "leaver-reader", [], [party]);
  });
  after(() => stack.stop());

  it("is no failure of the gateway's: nothing logged as one, the request settled", async () => {
    // Open-ended, with a long idle wait: the answer is still being collected when the client leaves.
    const body = JSON.stringify(updatesRequest(partyFilter(party)));
    const connection = await RawConnection.open(stack.gateway.port);
    connection.write(
      `POST /v2/updates?stream_idle_timeout_ms=30000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${reader}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const gauge = stack.gateway.metrics?.httpInFlight;
    assert.ok(gauge);
    const inFlightIs = async (value: number, what: string) => {
      for (let tries = 0; (await gauge.get()).values[0]?.value !== value; tries++) {
        assert.ok(tries < 500, `timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await inFlightIs(1, "the list twin to be in flight");
    connection.destroy();
    await inFlightIs(0, "the in-flight gauge back to 0");
    const failures = gatewayLog.entries().filter((e) => e.level === 50);
    assert.deepEqual(
      failures.map((e) => e.msg),
      [],
    );
  });
});
