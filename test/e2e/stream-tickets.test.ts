import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { tickCommands } from "../../bench/lib/tick-commands.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { partyFilter, updatesRequest } from "../support/update-requests.js";
import { allocate } from "./ledger-client.js";

const PAGE = "https://wallet.example";

/** A GET of a ticket's stream as EventSource makes it (node:http: fetch keeps `Origin` to itself). */
class TicketReader {
  status = 0;
  readonly ids: string[] = [];
  readonly transactions: number[] = [];
  readonly errors: string[] = [];
  ended = false;
  readonly #request: http.ClientRequest;

  constructor(url: string, headers: Record<string, string>) {
    this.#request = http.get(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      this.status = res.statusCode ?? 0;
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        let end = text.indexOf("\n\n");
        while (end >= 0) {
          this.#event(text.slice(0, end));
          text = text.slice(end + 2);
          end = text.indexOf("\n\n");
        }
      });
      res.on("end", () => {
        this.ended = true;
      });
      res.on("error", () => undefined);
    });
    this.#request.on("error", () => undefined);
  }

  #event(block: string): void {
    const fields = new Map(
      block.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
    );
    const data = fields.get("data") ?? "";
    if (fields.get("event") === "JsCantonError") {
      this.errors.push((JSON.parse(data) as { code: string }).code);
      return;
    }
    const id = fields.get("id");
    if (id !== undefined) this.ids.push(id);
    const offset = (JSON.parse(data) as { update?: { Transaction?: { value: { offset: number } } } }).update
      ?.Transaction?.value.offset;
    if (offset !== undefined) this.transactions.push(offset);
  }

  get lastId(): string {
    return this.ids.at(-1) ?? "";
  }

  /** Ends the connection, as a dropped network would. */
  drop(): void {
    this.#request.destroy();
  }

  toString(): string {
    return JSON.stringify({ status: this.status, ids: this.ids, errors: this.errors, ended: this.ended });
  }
}

/**
 * Issue 40 item 1, the rules of a stream ticket over real sockets (the browser test shows a page
 * using them): what it binds (path, origin), that its URL opens once, that a reconnect needs its
 * stream's resume key, that an ended stream tells its client to stop, and renewals' answers.
 */
describe("stream tickets: the GET form of a stream for EventSource", () => {
  let stack: Stack;
  let party: string;
  let reader: string;
  const readers: TicketReader[] = [];

  before(async () => {
    stack = await startStack(["--server.cors.allowed-origins", PAGE]);
    party = await allocate(stack, "ticket");
    reader = tokenFor(`actAs-${party}`);
  });
  after(async () => {
    for (const r of readers) r.drop();
    await stack.stop();
  });

  const ticketFor = async (request: unknown, token = reader, origin = PAGE, path = "/v2/updates") => {
    const res = await fetch(`${stack.url}${path}/stream-ticket`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, origin },
      body: JSON.stringify(request),
    });
    const text = await res.text();
    const body = (res.headers.get("content-type") === "application/json" ? JSON.parse(text) : { text }) as {
      ticket: string;
      expiresAt: string;
    };
    return { status: res.status, body };
  };
  const read = (ticket: string, headers: Record<string, string> = { origin: PAGE }, path = "/v2/updates") => {
    const r = new TicketReader(`${stack.url}${path}?ticket=${encodeURIComponent(ticket)}`, headers);
    readers.push(r);
    return r;
  };
  const commit = async (): Promise<number> => {
    const res = await fetch(`${stack.url}/v2/commands/submit-and-wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${reader}` },
      body: JSON.stringify(tickCommands(`ticket-${Math.random()}`, party, 1)),
    });
    return ((await res.json()) as { completionOffset: number }).completionOffset;
  };

  it("issues a ticket for a request the ledger admits, bound to the token's life", async () => {
    const { status, body } = await ticketFor(updatesRequest(partyFilter(party)));
    assert.equal(status, 200, JSON.stringify(body));
    assert.match(body.ticket, /^[\w-]{32}$/);
    assert.ok(Date.parse(body.expiresAt) > Date.now(), body.expiresAt);
    const malformed = await ticketFor({ beginExclusive: "x" });
    assert.equal(malformed.status, 400);
    // A ticket's request is kept while the ticket lives: bounded as a query frame (1 MiB), not
    // as any body (64 MiB: a black-box test kept 1 GB with 62 tickets of 16 MiB bodies).
    const bulky = await ticketFor({
      ...updatesRequest(partyFilter(party)),
      padding: "x".repeat(1025 * 1024),
    });
    assert.equal(bulky.status, 413, JSON.stringify(bulky.body));
  });

  it("opens once: the same URL again, another path or another origin is refused 401", async () => {
    const request = updatesRequest(partyFilter(party));
    const first = (await ticketFor(request)).body.ticket;
    const opened = read(first);
    const created = await commit();
    await until(() => opened.transactions.includes(created), { observed: () => String(opened) });
    const again = read(first);
    await until(() => again.status !== 0);
    assert.equal(again.status, 401);
    const forFlats = (await ticketFor(request)).body.ticket;
    const wrongPath = read(forFlats, { origin: PAGE }, "/v2/updates/flats");
    await until(() => wrongPath.status !== 0);
    assert.equal(wrongPath.status, 401);
    // Spent by the wrong use: the right one is refused too.
    const afterWrongPath = read(forFlats);
    await until(() => afterWrongPath.status !== 0);
    assert.equal(afterWrongPath.status, 401);
    const wrongOrigin = read((await ticketFor(request)).body.ticket, { origin: "https://evil.example" });
    await until(() => wrongOrigin.status !== 0);
    assert.equal(wrongOrigin.status, 401);
  });

  it("lets a reconnect in with its stream's resume key only, and continues after its Last-Event-ID", async () => {
    const ticket = (await ticketFor(updatesRequest(partyFilter(party)))).body.ticket;
    const first = read(ticket);
    const before = await commit();
    await until(() => first.transactions.includes(before), { observed: () => String(first) });
    const lastId = first.lastId;
    assert.match(lastId, /^[\w-]{22}\.\d+$/);
    first.drop();
    const during = await commit();
    const guessed = read(ticket, {
      origin: PAGE,
      "last-event-id": `${"A".repeat(22)}.${lastId.split(".")[1]}`,
    });
    const bare = read(ticket);
    await until(() => guessed.status !== 0 && bare.status !== 0);
    assert.deepEqual([guessed.status, bare.status], [401, 401]);
    const resumed = read(ticket, { origin: PAGE, "last-event-id": lastId });
    const later = await commit();
    await until(() => resumed.transactions.includes(later), { observed: () => String(resumed) });
    assert.deepEqual(resumed.transactions, [during, later]);
  });

  it("tells the reconnect of an ended stream to stop (204)", async () => {
    const end = await commit();
    const ticket = (await ticketFor(updatesRequest(partyFilter(party), end - 1, end))).body.ticket;
    const bounded = read(ticket);
    await until(() => bounded.ended, { observed: () => String(bounded) });
    assert.deepEqual(bounded.transactions, [end]);
    const reconnect = read(ticket, { origin: PAGE, "last-event-id": bounded.lastId });
    await until(() => reconnect.status !== 0);
    assert.equal(reconnect.status, 204);
  });

  it("answers renewals: accepted with the new expiry, another user's refused, an idle stream's 409", async () => {
    const ticket = (await ticketFor(updatesRequest(partyFilter(party)))).body.ticket;
    const open = read(ticket);
    const created = await commit();
    await until(() => open.transactions.includes(created));
    const renew = async (token: string, forTicket = ticket) => {
      const res = await fetch(`${stack.url}/v2/stream-tickets/renewal`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ ticket: forTicket }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const fresh = tokenFor(`actAs-${party}`);
    const accepted = await renew(fresh);
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    const exp = JSON.parse(Buffer.from(fresh.split(".")[1] as string, "base64url").toString()) as {
      exp: number;
    };
    assert.deepEqual(accepted.body, { tokenRenewed: { expiresAt: new Date(exp.exp * 1000).toISOString() } });
    const another = await renew(tokenFor("participant_admin"));
    assert.equal(another.status, 400, JSON.stringify(another.body));
    assert.equal((await renew(fresh, "no-such-ticket")).status, 401);
    open.drop();
    await until(async () => (await renew(fresh)).status === 409);
    assert.deepEqual(open.errors, []);
  });
});

/** Issue 40 item 3: refusals a page can read, and Canton's HTTP refusal for everyone else. */
describe("refused WebSocket upgrades, for browsers and for other clients", () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  const upgrade = (headers: Record<string, string>, protocols: string[]) =>
    new Promise<string>((resolve) => {
      const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, protocols, { headers });
      let frame = "";
      socket.on("message", (data: Buffer) => {
        frame = (JSON.parse(data.toString("utf8")) as { code: string }).code;
      });
      socket.on("unexpected-response", (_req, res) => resolve(`HTTP ${res.statusCode}`));
      socket.on("close", (code, reason) => resolve(`${frame} ${code} ${reason.toString()}`));
      socket.on("error", () => undefined);
    });

  it("refuses a browser's upgrade without a token on the socket (4401), and anyone else's with 401", async () => {
    assert.equal(await upgrade({ origin: PAGE }, ["daml.ws.auth"]), "UNAUTHENTICATED 4401 unauthenticated");
    assert.equal(await upgrade({}, ["daml.ws.auth"]), "HTTP 401");
  });

  it("answers no frame to a renewal that did not ask for one", async () => {
    const party = await allocate(stack, "quiet");
    const token = tokenFor(`actAs-${party}`);
    const socket = new WebSocket(`${stack.url.replace(/^http/, "ws")}/v2/updates`, [
      "daml.ws.auth",
      `jwt.token.${token}`,
    ]);
    const frames: string[] = [];
    socket.on("message", (data: Buffer) => frames.push(data.toString("utf8")));
    await new Promise((resolve) => socket.on("open", resolve));
    socket.send(JSON.stringify(updatesRequest(partyFilter(party))));
    // A renewal is asked of the ledger from the stream's offset: one past the ledger's begin.
    const res = await fetch(`${stack.url}/v2/commands/submit-and-wait`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify(tickCommands("quiet-1", party, 1)),
    });
    assert.equal(res.status, 200);
    await until(() => frames.length > 0);
    socket.send(JSON.stringify({ token: tokenFor(`actAs-${party}`) }));
    socket.send(JSON.stringify({ token: tokenFor(`actAs-${party}`, { n: 2 }), acknowledge: true }));
    await until(() => frames.some((frame) => frame.includes("tokenRenewed")), {
      observed: () => frames.join("\n"),
    });
    socket.close(1000);
    const notices = frames.filter((frame) => !frame.includes('"update"'));
    assert.equal(notices.length, 1, frames.join("\n"));
    assert.match(notices[0] as string, /^\{"tokenRenewed":\{"expiresAt":"[\d-]+T[\d:.]+Z"\}\}$/);
  });
});
