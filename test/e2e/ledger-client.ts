import { request as httpRequest } from "node:http";
import WebSocket from "ws";
import { jsonBody, type Stack } from "../support/stack.js";
import { tokenFor } from "../support/tokens.js";

/** A small JSON Ledger API client over the real stack, for the end-to-end tests. */
export const IOU = "#gateway-samples:Iou:Iou";
export const ASSET = "#gateway-samples:Iou:Asset";
export const ACCOUNT = "#gateway-samples:Account:Account";

export interface Reply<T = unknown> {
  status: number;
  body: T;
}

/** JSON answers parsed; text answers (400 `Invalid value for: ...`) kept as text. */
export async function call<T = Record<string, unknown>>(
  stack: Stack,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<Reply<T>> {
  // fetch refuses a GET with a body, which /v2/state/active-contracts-page takes.
  if (method === "GET" && body !== undefined) return getWithBody<T>(stack, path, body, token ?? stack.token);
  const init = body === undefined ? { method } : jsonBody(method, body);
  const res = await stack.request(path, { ...init, ...(token === undefined ? {} : { token }) });
  return { status: res.status, body: parse<T>(await res.text(), res.headers.get("content-type")) };
}

function parse<T>(text: string, contentType: string | null): T {
  if (text === "") return undefined as T;
  return (contentType?.startsWith("application/json") ? JSON.parse(text) : text) as T;
}

function getWithBody<T>(stack: Stack, path: string, body: unknown, token: string): Promise<Reply<T>> {
  const payload = Buffer.from(JSON.stringify(body));
  // Node frames a GET body only when told its length.
  const headers = { authorization: `Bearer ${token}`, "content-length": String(payload.length) };
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${stack.url}${path}`, { method: "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: parse<T>(Buffer.concat(chunks).toString("utf8"), res.headers["content-type"] ?? null),
        }),
      );
    });
    req.on("error", reject);
    req.end(payload);
  });
}

export async function allocate(stack: Stack, hint: string): Promise<string> {
  const reply = await call<{ partyDetails: { party: string } }>(stack, "POST", "/v2/parties", {
    partyIdHint: hint,
  });
  if (reply.status !== 200) throw new Error(`allocate ${hint}: ${JSON.stringify(reply.body)}`);
  return reply.body.partyDetails.party;
}

/** The fields of a sample-package Iou without observers. */
export interface IouFields {
  issuer: string;
  owner: string;
  currency: string;
  amount: string;
}

/** submit-and-wait-for-transaction creating one Iou, acting as its issuer: the reply as it came. */
export function createIouTransaction(
  stack: Stack,
  token: string,
  commandId: string,
  iou: IouFields,
  // biome-ignore lint/suspicious/noExplicitAny: the JSON answer, read freely by each test
): Promise<Reply<Record<string, any>>> {
  return call(
    stack,
    "POST",
    "/v2/commands/submit-and-wait-for-transaction",
    {
      commands: {
        commandId,
        actAs: [iou.issuer],
        commands: [{ CreateCommand: { templateId: IOU, createArguments: { ...iou, observers: [] } } }],
      },
    },
    token,
  );
}

/** One committed Iou: its update id, and when it was asked for (epoch ms). */
export interface CommittedIou {
  readonly updateId: string;
  readonly at: number;
}

/**
 * Ious that `party()` issues and owns, one a call, committed with `token()` (both read at each
 * call: tests allocate them once their stack runs); each command id is `label` and a number.
 */
export function iouCommitter(
  stack: () => Stack,
  token: () => string,
  party: () => string,
  label: string,
): (labelled?: string) => Promise<CommittedIou> {
  let commands = 0;
  return async (labelled = label) => {
    const at = Date.now();
    commands += 1;
    const issuer = party();
    const reply = await createIouTransaction(stack(), token(), `${labelled}-${commands}`, {
      issuer,
      owner: issuer,
      currency: "EUR",
      amount: String(commands),
    });
    if (reply.status !== 200)
      throw new Error(`commit ${labelled}-${commands}: ${JSON.stringify(reply.body)}`);
    return { updateId: reply.body.transaction.updateId as string, at };
  };
}

/** A user that may act as these parties, and its token. */
export async function userFor(
  stack: Stack,
  id: string,
  actAs: string[],
  readAs: string[] = [],
): Promise<string> {
  const rights = [
    ...actAs.map((party) => ({ kind: { CanActAs: { value: { party } } } })),
    ...readAs.map((party) => ({ kind: { CanReadAs: { value: { party } } } })),
  ];
  const reply = await call(stack, "POST", "/v2/users", {
    user: { id, primaryParty: actAs[0] ?? "" },
    rights,
  });
  if (reply.status !== 200) throw new Error(`create user ${id}: ${JSON.stringify(reply.body)}`);
  return tokenFor(id);
}

export const wildcard = (parties: string[]) => ({
  filtersByParty: Object.fromEntries(
    parties.map((p) => [p, { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] }]),
  ),
});

export interface Frames {
  frames: Record<string, unknown>[];
  code: number;
}

/** Opens a WebSocket stream, sends the query frame, collects frames until the server closes (or `take`). */
export function wsStream(
  stack: Stack,
  path: string,
  request: unknown,
  token: string,
  take = Number.POSITIVE_INFINITY,
): Promise<Frames> {
  return new Promise((resolve, reject) => {
    const url = `${stack.url.replace(/^http/, "ws")}${path}`;
    const socket = new WebSocket(url, ["daml.ws.auth", `jwt.token.${token}`]);
    const frames: Record<string, unknown>[] = [];
    socket.on("open", () => socket.send(JSON.stringify(request)));
    socket.on("message", (data: Buffer) => {
      frames.push(JSON.parse(data.toString("utf8")) as Record<string, unknown>);
      if (frames.length >= take) socket.close(1000);
    });
    socket.on("close", (code) => resolve({ frames, code }));
    socket.on("error", reject);
  });
}

/** The answer to an upgrade: its status, the 101's protocol, or the refusal's JSON body. */
export function upgradeAs(
  wsUrl: string,
  token: string,
): Promise<{ status: number; protocol?: string; body?: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${wsUrl}/v2/updates`, ["daml.ws.auth", `jwt.token.${token}`]);
    socket.on("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
      );
    });
    socket.on("open", () => {
      resolve({ status: 101, protocol: socket.protocol });
      socket.close();
    });
    socket.on("error", (error) => {
      if (!error.message.startsWith("Unexpected server response")) reject(error);
    });
  });
}
