import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import {
  type Running,
  type RunningSandbox,
  startGatewayProcess,
  startSandboxProcess,
} from "../../bench/lib/processes.js";
import { mintToken } from "../../src/jwt/mint-token.js";
import { reopenedWhenLostInCork } from "../support/lost-in-cork.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { debianBinary } from "./debian-package.js";
import { type ShippedNginx, startShippedNginx } from "./shipped-nginx.js";

/**
 * deploy/nginx/ledger-json-gateway.conf as shipped (only its upstream servers and listen
 * address replaced), run by Debian's nginx in front of two gateway instances (path prefix
 * /api) on one standalone sandbox: HTTP commands and reads, list twins and WebSocket streams
 * (subprotocol auth, upgrade, close codes) all go through it, and both instances serve.
 */
const PREFIX = "/api";
const COMMANDS = 24;

const nginx = await debianBinary("nginx", "nginx");

describe("nginx in front of two gateway instances", {
  skip: typeof nginx === "string" ? false : nginx.skip,
}, () => {
  let sandbox: RunningSandbox;
  const gateways: Running[] = [];
  let proxy: ShippedNginx | undefined;
  let base: string;
  let token: string;
  let party: string;

  before(async () => {
    sandbox = await startSandboxProcess(0, 64);
    party = sandbox.tickParty;
    token = mintToken({ user: `actAs-${party}`, secret: "test", expiresInSeconds: 600 });
    for (let i = 0; i < 2; i++)
      gateways.push(await startGatewayProcess(sandbox.port, ["--path-prefix", PREFIX]));
    proxy = await startShippedNginx(
      nginx as string,
      gateways.map((g) => g.port),
      `${PREFIX}/livez`,
    );
    base = `http://127.0.0.1:${proxy.port}`;
  });

  after(async () => {
    await proxy?.stop();
    for (const gateway of gateways) await gateway.stop();
    await sandbox?.stop();
  });

  const auth = () => ({ authorization: `Bearer ${token}` });

  it("serves the probes under the prefix and nothing outside it", async () => {
    assert.equal((await fetch(`${base}${PREFIX}/livez`)).status, 200);
    const ready = await fetch(`${base}${PREFIX}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    assert.equal((await fetch(`${base}/livez`)).status, 404);
  });

  it("passes commands and reads through to both instances", async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < COMMANDS) {
          const i = next++;
          const res = await fetch(`${base}${PREFIX}/v2/commands/submit-and-wait`, {
            method: "POST",
            headers: auth(),
            body: JSON.stringify({
              commandId: `nginx-${i}`,
              actAs: [party],
              commands: [
                {
                  CreateCommand: {
                    templateId: "#gateway-samples:Bench:Tick",
                    createArguments: { owner: party, seq: String(i), payload: "through nginx" },
                  },
                },
              ],
            }),
          });
          assert.equal(res.status, 200, await res.text());
        }
      }),
    );
    const unauthenticated = await fetch(`${base}${PREFIX}/v2/state/ledger-end`);
    assert.equal(unauthenticated.status, 401);
    // No gateway-side verification: the ledger judges the token-less request (its redacted 401).
    assert.deepEqual(
      (({ code, errorCategory, grpcCodeValue }) => ({ code, errorCategory, grpcCodeValue }))(
        (await unauthenticated.json()) as { code: string; errorCategory: number; grpcCodeValue: number },
      ),
      { code: "NA", errorCategory: -1, grpcCodeValue: 16 },
    );
    for (const gateway of gateways) {
      assert.ok(
        (await counter(gateway, "ledger_gateway_http_requests_total", "submit-and-wait")) > 0,
        `the instance on ${gateway.port} served commands`,
      );
    }
  });

  it("passes list twins through whole", async () => {
    const res = await fetch(`${base}${PREFIX}/v2/updates`, {
      method: "POST",
      headers: auth(),
      body: JSON.stringify(updatesRequest(partyFilter(party), 0, await ledgerEnd())),
    });
    assert.equal(res.status, 200);
    const seqs = ((await res.json()) as Element[]).map(seqOf).filter((s) => s !== undefined);
    assert.deepEqual(
      [...seqs].sort((a, b) => a - b),
      Array.from({ length: COMMANDS }, (_, i) => i),
    );
  });

  it("upgrades WebSockets with subprotocol auth and streams every element to the end, on both instances", async () => {
    const end = await ledgerEnd();
    const url = `${base.replace(/^http/, "ws")}${PREFIX}/v2/updates`;
    const streams = await reopenedWhenLostInCork(
      gateways.map((g) => `http://127.0.0.1:${g.port}${PREFIX}`),
      Array.from(
        { length: 6 },
        () => () =>
          readStream(url, ["daml.ws.auth", `jwt.token.${token}`], updatesRequest(partyFilter(party), 0, end)),
      ),
    );
    for (const stream of streams) {
      assert.equal(stream.protocol, "daml.ws.auth");
      assert.equal(stream.code, 1000);
      assert.equal(stream.seqs.length, COMMANDS);
    }
    for (const gateway of gateways) {
      assert.ok(
        (await counter(gateway, "ledger_gateway_ws_closes_total", "")) > 0,
        `the instance on ${gateway.port} served WebSocket streams`,
      );
    }
    // Without a token the gateway answers the upgrade with a plain 401, and nginx passes it on.
    const refused = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      socket.on("open", () => reject(new Error("opened without a token")));
      socket.on("error", () => undefined);
    });
    assert.equal(refused, 401);
  });

  async function ledgerEnd(): Promise<number> {
    const res = await fetch(`${base}${PREFIX}/v2/state/ledger-end`, { headers: auth() });
    return ((await res.json()) as { offset: number }).offset;
  }
});

type Element = {
  update?: { Transaction?: { value: { events: { CreatedEvent?: { createArgument: { seq: string } } }[] } } };
};
const seqOf = (element: Element): number | undefined => {
  const seq = element.update?.Transaction?.value.events[0]?.CreatedEvent?.createArgument.seq;
  return seq === undefined ? undefined : Number(seq);
};

/** The shipped config with this test's two gateways as its upstream and a free local port. */
/** Sum of a counter's series on one instance whose labels contain `labelText`. */
async function counter(gateway: Running, name: string, labelText: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.port}${PREFIX}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) && line.includes(labelText))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

function readStream(
  url: string,
  protocols: string[],
  request: unknown,
): Promise<{ protocol: string; code: number; frames: number; seqs: number[] }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols);
    const seqs: number[] = [];
    let frames = 0;
    socket.on("open", () => socket.send(JSON.stringify(request)));
    socket.on("message", (data: Buffer) => {
      frames++;
      const seq = seqOf(JSON.parse(data.toString("utf8")) as Element);
      if (seq !== undefined) seqs.push(seq);
    });
    socket.on("close", (code) => resolve({ protocol: socket.protocol, code, frames, seqs }));
    socket.on("error", reject);
  });
}
