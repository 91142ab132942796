import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { parse } from "yaml";
import { AUDIENCE, signToken } from "../jwt/test-tokens.js";
import { type Stack, startStack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";
import { until } from "../support/until.js";
import { assertCantonShape } from "./canton-shapes.js";
import { allocate, call, createIouTransaction, userFor, wsStream } from "./ledger-client.js";

type Json = Record<string, any>;

const PATH = "/v2/commands/command-completions";
const GET_COMPLETIONS = "CommandCompletionService/GetCompletions";

/** The command ids of a completions stream's elements, checkpoints left out. */
const commandIds = (elements: Json[]) =>
  elements
    .map((e) => e.completionResponse?.Completion?.value?.commandId as string | undefined)
    .filter((id): id is string => id !== undefined);

/**
 * Issue 36, Canton 3.5.10: CommandCompletionService.GetCompletions as a client generated from
 * openapi-3.5.10.yaml / asyncapi-3.5.10.yaml sees it. Unlike /v2/commands/completions it has no
 * user id: every user's completions for the parties, and all parties' for a reader of any party.
 */
describe("/v2/commands/command-completions (GetCompletions, Canton 3.5.10)", () => {
  let stack: Stack;
  let bank: string;
  let alice: string;
  let bankToken: string;
  let clerkToken: string;
  let aliceToken: string;
  let readerToken: string;

  const submit = async (token: string, commandId: string, owner: string, issuer = bank) => {
    const reply = await createIouTransaction(stack, token, commandId, {
      issuer,
      owner,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  };
  const ledgerEnd = async () =>
    (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end")).body.offset;

  before(async () => {
    stack = await startStack(["--websocket-config.http-list-wait-time", "300ms"]);
    bank = await allocate(stack, "bank");
    alice = await allocate(stack, "alice");
    bankToken = await userFor(stack, "bank-user", [bank]);
    clerkToken = await userFor(stack, "bank-clerk", [bank]);
    aliceToken = await userFor(stack, "alice-user", [alice]);
    await call(stack, "POST", "/v2/users", {
      user: { id: "any-reader" },
      rights: [{ kind: { CanReadAsAnyParty: { value: {} } } }],
    });
    readerToken = tokenFor("any-reader");
    await submit(bankToken, "by-bank-user", alice);
    await submit(clerkToken, "by-bank-clerk", alice);
    await submit(aliceToken, "by-alice-user", bank, alice);
  });
  after(() => stack.stop());

  it("lists every user's completions for the parties, each element of Canton's shape", async () => {
    const reply = await call<Json[]>(stack, "POST", PATH, { parties: [bank], beginExclusive: 0 }, bankToken);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(commandIds(reply.body), ["by-bank-user", "by-bank-clerk"]);
    for (const element of reply.body) assertCantonShape("CompletionStreamResponse", element);
    const completions = reply.body.map((e) => e.completionResponse.Completion?.value).filter(Boolean);
    assert.deepEqual(
      completions.map((c) => [c.userId, c.actAs]),
      [
        ["bank-user", [bank]],
        ["bank-clerk", [bank]],
      ],
    );
    // The deprecated stream, for contrast: one user's completions only.
    const own = await call<Json[]>(
      stack,
      "POST",
      "/v2/commands/completions",
      { userId: "bank-user", parties: [bank], beginExclusive: 0 },
      bankToken,
    );
    assert.deepEqual(commandIds(own.body), ["by-bank-user"]);
  });

  it("honours limit and answers NDJSON and server-sent events as the other list twins", async () => {
    const limited = await call<Json[]>(
      stack,
      "POST",
      `${PATH}?limit=1&stream_idle_timeout_ms=300`,
      { parties: [bank] },
      bankToken,
    );
    assert.equal(limited.status, 200, JSON.stringify(limited.body));
    assert.deepEqual(commandIds(limited.body), ["by-bank-user"]);
    const res = await stack.request(PATH, {
      method: "POST",
      body: JSON.stringify({ parties: [bank], beginExclusive: 0 }),
      headers: { accept: "application/x-ndjson" },
      token: bankToken,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/x-ndjson/);
    const lines = (await res.text())
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Json);
    assert.deepEqual(commandIds(lines), ["by-bank-user", "by-bank-clerk"]);
    const sse = await stack.request(PATH, {
      method: "POST",
      body: JSON.stringify({ parties: [bank], beginExclusive: 0 }),
      headers: { accept: "text/event-stream" },
      token: bankToken,
    });
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = (await sse.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Json);
    assert.deepEqual(events, lines);
  });

  it("streams the same completions over the WebSocket", async () => {
    const list = await call<Json[]>(stack, "POST", PATH, { parties: [bank], beginExclusive: 0 }, bankToken);
    const { frames } = await wsStream(stack, PATH, { parties: [bank], beginExclusive: 0 }, clerkToken, 2);
    for (const frame of frames) assertCantonShape("CompletionStreamResponse", frame);
    assert.deepEqual(frames.slice(0, 2), list.body.slice(0, 2));
  });

  it("gives all parties' completions to a reader of any party when no party is named", async () => {
    const reply = await call<Json[]>(stack, "POST", PATH, { parties: [], beginExclusive: 0 }, readerToken);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(commandIds(reply.body), ["by-bank-user", "by-bank-clerk", "by-alice-user"]);
    const omitted = await call<Json[]>(stack, "POST", PATH, { beginExclusive: 0 }, readerToken);
    assert.deepEqual(omitted.body, reply.body);
  });

  it("refuses no parties without CanReadAsAnyParty, over HTTP and on the socket", async () => {
    const refused = await call<Json>(stack, "POST", PATH, { parties: [], beginExclusive: 0 }, bankToken);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.grpcCodeValue, 7);
    assertCantonShape("JsCantonError", refused.body);
    const { frames, code } = await wsStream(stack, PATH, { parties: [] }, bankToken);
    assert.equal(frames.length, 1);
    assert.equal(frames[0]?.grpcCodeValue, 7);
    assert.equal(code, 1000);
    const foreign = await call<Json>(stack, "POST", PATH, { parties: [alice] }, bankToken);
    assert.equal(foreign.status, 403, "another user's party is refused too");
  });

  it("refuses a malformed request as Canton does: 400 Invalid value for: body", async () => {
    const res = await stack.request(PATH, {
      method: "POST",
      body: JSON.stringify({ parties: "bank" }),
      token: bankToken,
    });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /^Invalid value for: body/);
  });

  it("serves two subscribers of different users from one ledger call once they caught up", async () => {
    const request = { parties: [bank], beginExclusive: await ledgerEnd() };
    const first = completionsSocket(stack.url, PATH, bankToken, request);
    const second = completionsSocket(stack.url, PATH, clerkToken, request);
    // Each starts on its own call, the ledger's admission of its token, and splices in later.
    await until(() => stack.sandbox.calls.open(GET_COMPLETIONS) === 2);
    await submit(bankToken, "live-1", alice);
    await until(() => first.frames.length >= 1 && second.frames.length >= 1);
    await until(() => stack.sandbox.calls.open(GET_COMPLETIONS) === 1);
    await submit(clerkToken, "live-2", alice);
    await until(() => commandIds(first.frames).length >= 2 && commandIds(second.frames).length >= 2);
    assert.deepEqual(commandIds(first.frames), ["live-1", "live-2"]);
    assert.deepEqual(commandIds(second.frames), ["live-1", "live-2"]);
    first.socket.close(1000);
    second.socket.close(1000);
    await Promise.all([first.ended, second.ended]);
    await until(() => stack.sandbox.calls.open(GET_COMPLETIONS) === 0);
  });

  it("documents the operation and the channel as Canton 3.5.10 names them", async () => {
    const openapi = parse(await (await stack.request("/docs/openapi", { token: null })).text()) as Json;
    const post = openapi.paths[PATH]?.post;
    assert.equal(post?.operationId, "postV2CommandsCommand-completions");
    assert.equal(
      post?.requestBody?.content?.["application/json"]?.schema?.$ref,
      "#/components/schemas/GetCompletionsRequest",
    );
    assert.deepEqual(
      ((post?.parameters ?? []) as Json[]).filter((p) => p.in === "query").map((p) => p.name),
      ["limit", "stream_idle_timeout_ms"],
    );
    assert.equal(openapi.paths["/v2/state/active-contracts-page"]?.get?.deprecated, true);
    assert.equal(openapi.paths["/v2/state/active-contracts-page"]?.post?.deprecated, undefined);
    const asyncapi = parse(await (await stack.request("/docs/asyncapi", { token: null })).text()) as Json;
    const channel = asyncapi.channels[PATH];
    assert.equal(channel?.subscribe?.operationId, "onV2CommandsCommand-completions");
    assert.equal(channel?.publish?.operationId, "sendV2CommandsCommand-completions");
  });
});

const SECRET = "command-completions-secret";
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

/**
 * Renewal as on /v2/commands/completions, with a sandbox that verifies tokens and ends a stream
 * with ACCESS_TOKEN_EXPIRED at its token's expiry, as Canton does.
 */
describe("/v2/commands/command-completions with short-lived tokens", () => {
  let stack: Stack;
  let party: string;
  let writer: string;
  const token = (user: string, exp: number) => signToken(user, { key: SECRET, exp });

  before(async () => {
    stack = await startStack(
      [],
      {},
      { sandbox: { auth: { mode: "hs256", secret: SECRET, audience: AUDIENCE } } },
    );
    const admin = signToken("participant_admin", { key: SECRET });
    const allocated = await call<Json>(stack, "POST", "/v2/parties", { partyIdHint: "renew" }, admin);
    party = allocated.body.partyDetails.party;
    for (const [id, right] of [
      ["completion-reader", "CanReadAs"],
      ["completion-writer", "CanActAs"],
    ] as const) {
      const rights = [{ kind: { [right]: { value: { party } } } }];
      const created = await call(
        stack,
        "POST",
        "/v2/users",
        { user: { id, primaryParty: party }, rights },
        admin,
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    writer = token("completion-writer", inSeconds(240));
  });
  after(() => stack.stop());

  const submit = async (commandId: string) => {
    const reply = await createIouTransaction(stack, writer, commandId, {
      issuer: party,
      owner: party,
      currency: "EUR",
      amount: "1",
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
  };

  it("keeps a renewed stream going past its first token's expiry, and ends the other at its own", async () => {
    const end = (await call<{ offset: number }>(stack, "GET", "/v2/state/ledger-end", undefined, writer)).body
      .offset;
    const request = { parties: [party], beginExclusive: end };
    const firstExpiry = inSeconds(6);
    const renewing = completionsSocket(stack.url, PATH, token("completion-reader", firstExpiry), request);
    const expiring = completionsSocket(stack.url, PATH, token("completion-reader", firstExpiry), request);
    await submit("before-expiry");
    const seen = (s: { frames: Json[] }) => JSON.stringify(s.frames.slice(-3));
    await until(() => commandIds(renewing.frames).length === 1 && commandIds(expiring.frames).length === 1, {
      observed: () => `${seen(renewing)} ${seen(expiring)}`,
    });
    renewing.socket.send(JSON.stringify({ token: token("completion-reader", inSeconds(60)) }));

    const expired = await expiring.ended;
    assert.ok(Date.now() >= firstExpiry * 1000, "not before its token's expiry");
    assert.equal(expiring.frames.at(-1)?.code, "ACCESS_TOKEN_EXPIRED", seen(expiring));
    assert.equal(expired, 1000);
    await submit("after-expiry");
    await until(() => commandIds(renewing.frames).length === 2, { observed: () => seen(renewing) });
    assert.deepEqual(commandIds(renewing.frames), ["before-expiry", "after-expiry"]);
    assert.equal(
      renewing.frames.filter((f) => f.code !== undefined).length,
      0,
      `no error frame: ${seen(renewing)}`,
    );
    renewing.socket.close(1000);
    await renewing.ended;
  });
});

/** A WebSocket on `path` that sends `request` once open and keeps every frame. */
function completionsSocket(url: string, path: string, token: string, request: unknown) {
  const socket = new WebSocket(`${url.replace(/^http/, "ws")}${path}`, [
    "daml.ws.auth",
    `jwt.token.${token}`,
  ]);
  const frames: Json[] = [];
  socket.on("open", () => socket.send(JSON.stringify(request)));
  socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8")) as Json));
  socket.on("error", () => undefined);
  const ended = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
  return { socket, ended, frames };
}
