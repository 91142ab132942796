import WebSocket from "ws";
import type { FuzzCase, HttpCase, WsCase } from "./cases.js";
import { type RawOutcome, sendRaw } from "./raw-http.js";

/**
 * Runs one case against the gateway and judges its answer. What counts as a failure:
 * - no answer within the deadline (a hang), or a connection closed without an answer, unless
 *   the case sent bytes that are not HTTP (then closing is a fair refusal);
 * - any 5xx for a client's fault. The only 5xx that are not: 505 for a well-formed request line
 *   of another HTTP version; 501 whose JsCantonError carries the ledger's UNIMPLEMENTED (the
 *   ledger lacks the service, whatever the input); and 503/504 while the fuzzer itself has
 *   frozen or killed the ledger (phase `fault`);
 * - a status outside the case's own expectation (a token attack must get 401; conflicting
 *   Content-Length headers 400);
 * - an error answer that is neither `Invalid value for: ...` text nor a JsCantonError, and a 405
 *   without `Allow`;
 * - on WebSockets: a 5xx upgrade answer, close 1011 or 1006 (no close frame) when the client
 *   kept to the protocol, an error frame of an internal error (gRPC INTERNAL/UNKNOWN, or
 *   UNAVAILABLE/DEADLINE_EXCEEDED with a healthy ledger), a session that should end but hangs.
 */
export type Phase = "clean" | "fault";

export interface CaseResult {
  /** `200`, `timeout`, `closed`, `ws 1000`, `ws 401`... */
  answer: string;
  ms: number;
  failure?: string;
  /** A short excerpt of the answer, for the findings. */
  detail?: string;
}

export interface ExecuteOptions {
  port: number;
  deadlineMs: number;
  phase: () => Phase;
  /** The deadline of a request the gateway can refuse without the ledger (malformed HTTP). */
  refusalDeadlineMs: number;
  /** How long a live stream is read before the client closes it. */
  openStreamMs: number;
}

export async function execute(c: FuzzCase, options: ExecuteOptions): Promise<CaseResult> {
  return c.kind === "http" ? executeHttp(c, options) : executeWs(c, options);
}

async function executeHttp(c: HttpCase, options: ExecuteOptions): Promise<CaseResult> {
  // Bytes that are not HTTP need no ledger: their refusal is due at once, not after a ledger deadline.
  const outcome = await sendRaw(
    options.port,
    c.request,
    c.expect.mayClose ? options.refusalDeadlineMs : options.deadlineMs,
  );
  const verdict = judgeHttp(c, outcome, options.phase());
  const valid = c.expect.withValidToken;
  if (
    verdict.failure !== undefined &&
    valid !== undefined &&
    outcome.kind === "answer" &&
    outcome.status >= 400 &&
    outcome.status < 500
  ) {
    const replay = await sendRaw(options.port, valid, options.deadlineMs);
    if (replay.kind === "answer" && replay.status === outcome.status && sameError(replay.body, outcome.body))
      return {
        answer: verdict.answer,
        detail: "judged before the token: a valid token gets the same answer",
        ms: outcome.ms,
      };
    if (replay.kind === "answer")
      return {
        ...verdict,
        failure: `${verdict.failure}; with a valid token: ${replay.status} ${excerpt(replay.body).slice(0, 120)}`,
        ms: outcome.ms,
      };
  }
  return { ...verdict, ms: outcome.ms };
}

/** Same JsCantonError code, or the same `Invalid value for` text. */
function sameError(a: Buffer, b: Buffer): boolean {
  const [ea, eb] = [cantonError(a.toString("utf8")), cantonError(b.toString("utf8"))];
  if (ea !== undefined || eb !== undefined) return ea?.code === eb?.code;
  return a.equals(b);
}

function excerpt(body: Buffer | string): string {
  const text = typeof body === "string" ? body : body.toString("utf8");
  return text.length > 400 ? `${text.slice(0, 400)}...(${text.length} chars)` : text;
}

interface JsCantonErrorLike {
  code: string;
  cause: string;
  grpcCodeValue?: number;
}

function cantonError(text: string): JsCantonErrorLike | undefined {
  try {
    const value = JSON.parse(text) as Partial<JsCantonErrorLike>;
    return typeof value?.code === "string" && typeof value.cause === "string"
      ? (value as JsCantonErrorLike)
      : undefined;
  } catch {
    return undefined;
  }
}

export function judgeHttp(c: HttpCase, outcome: RawOutcome, phase: Phase): Omit<CaseResult, "ms"> {
  if (outcome.kind === "timeout")
    return {
      answer: "timeout",
      failure: c.expect.mayClose
        ? "no answer and no close: the connection is held after a malformed request"
        : "no answer within the deadline",
    };
  if (outcome.kind === "closed")
    return c.expect.mayClose
      ? { answer: "closed" }
      : {
          answer: "closed",
          failure: `connection closed without an answer${outcome.error ? ` (${outcome.error})` : ""}`,
        };
  const { status, headers, body } = outcome;
  const answer = String(status);
  const detail = excerpt(body);
  if (status === 0) return { answer: "not-http", failure: "the answer is not HTTP", detail };
  const error = cantonError(body.toString("utf8"));
  // Canton refuses a token whose user id is malformed with 400 INVALID_TOKEN: a refusal too.
  const refusedToken = error?.code === "INVALID_TOKEN" && c.expect.statuses?.includes(401);
  // The ledger judges tokens: while it is down, its absence is the answer.
  const ledgerAway = phase === "fault" && (status === 503 || status === 504);
  if (c.expect.statuses !== undefined && !c.expect.statuses.includes(status) && !refusedToken && !ledgerAway)
    return { answer, failure: `expected ${c.expect.statuses.join(" or ")}, got ${status}`, detail };
  if (status >= 500) {
    const upstream =
      (status === 505 && c.expect.may505) || (status === 501 && error?.grpcCodeValue === 12) || ledgerAway;
    if (!upstream)
      return {
        answer,
        failure: `${status} for a client's request${error ? ` (${error.code})` : ""}`,
        detail,
      };
  }
  if (status === 405 && headers.allow === undefined)
    return { answer, failure: "405 without an Allow header", detail };
  if (status >= 400 && c.request.method !== "HEAD") {
    const text = body.toString("utf8");
    if (!text.startsWith("Invalid value for: ") && error === undefined)
      return {
        answer,
        failure: "an error answer that is neither 'Invalid value for' text nor a JsCantonError",
        detail,
      };
  }
  return { answer, detail };
}

async function executeWs(c: WsCase, options: ExecuteOptions): Promise<CaseResult> {
  const started = performance.now();
  const url = `ws://127.0.0.1:${options.port}${c.path}`;
  let socket: WebSocket;
  try {
    socket = new WebSocket(url, c.protocols, {
      headers: c.headers,
      perMessageDeflate: false,
      maxPayload: 256 * 1024 * 1024,
    });
  } catch {
    // Not a valid subprotocol name (the ws client refuses it): the token goes in the header instead.
    const token = c.protocols.find((p) => p.startsWith("jwt.token."))?.slice("jwt.token.".length) ?? "";
    socket = new WebSocket(url, ["daml.ws.auth"], {
      headers: { ...c.headers, authorization: `Bearer ${token}` },
      perMessageDeflate: false,
      maxPayload: 256 * 1024 * 1024,
    });
  }
  return new Promise<CaseResult>((resolve) => {
    let settled = false;
    let frames = 0;
    let elements = 0;
    let lastFrame = "";
    let internal: string | undefined;
    const finish = (result: Omit<CaseResult, "ms">) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(ourClose);
      socket.removeAllListeners();
      socket.on("error", () => {});
      socket.terminate();
      resolve({ ...result, ms: performance.now() - started });
    };
    let ourClose: NodeJS.Timeout | undefined;
    const deadline = setTimeout(
      () =>
        finish({
          answer: "ws timeout",
          failure:
            c.expect === "end" ? "the session did not end within the deadline" : "our close was not answered",
          detail: `${frames} frames; last: ${excerpt(lastFrame)}`,
        }),
      options.deadlineMs,
    );
    socket.on("unexpected-response", (_request, response) => {
      const status = response.statusCode ?? 0;
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      response.on("end", () => {
        const detail = excerpt(body);
        const upstream = options.phase() === "fault" && (status === 503 || status === 504);
        if (status >= 500 && !upstream)
          finish({ answer: `ws ${status}`, failure: `${status} for an upgrade request`, detail });
        else if (c.refuse && !c.refuse.includes(status) && cantonError(body)?.code !== "INVALID_TOKEN")
          finish({
            answer: `ws ${status}`,
            failure: `token attack answered ${status}, not ${c.refuse.join(" or ")}`,
            detail,
          });
        else finish({ answer: `ws ${status}`, detail });
      });
      response.on("error", () => finish({ answer: `ws ${status}`, detail: "answer cut" }));
    });
    socket.on("open", () => {
      for (const frame of c.frames) socket.send(frame.data, { binary: frame.binary === true }, () => {});
      if (c.garbage !== undefined)
        (socket as unknown as { _socket: { write(b: Buffer): void } })._socket.write(c.garbage);
      if (c.expect === "open") ourClose = setTimeout(() => socket.close(1000), options.openStreamMs);
    });
    socket.on("message", (data: Buffer) => {
      frames++;
      lastFrame = data.toString("utf8", 0, Math.min(data.length, 2000));
      const error = cantonError(data.length < 100_000 ? data.toString("utf8") : "");
      if (error === undefined) {
        elements++;
        return;
      }
      const severe =
        error.grpcCodeValue === 13 ||
        error.grpcCodeValue === 2 ||
        (options.phase() === "clean" && (error.grpcCodeValue === 14 || error.grpcCodeValue === 4));
      if (severe) internal ??= `error frame ${error.code} (gRPC ${error.grpcCodeValue})`;
    });
    socket.on("close", (code: number) => {
      const answer = `ws ${code}`;
      const detail = `${frames} frames; last: ${excerpt(lastFrame)}`;
      if (internal !== undefined) return finish({ answer, failure: internal, detail });
      if (c.refuse && elements > 0)
        return finish({ answer, failure: `token attack upgraded and streamed ${elements} elements`, detail });
      if (c.refuse && frames === 0)
        return finish({
          answer,
          failure: `token attack upgraded and closed ${code} without an error frame`,
          detail,
        });
      if (code === 1011) return finish({ answer, failure: "closed 1011 (internal error)", detail });
      if (code === 1006 && c.garbage === undefined && !c.mayDrop)
        return finish({ answer, failure: "connection dropped without a close frame (1006)", detail });
      finish({ answer, detail });
    });
    socket.on("error", (error) => {
      if (
        !settled &&
        socket.readyState === WebSocket.CONNECTING &&
        !(error.message ?? "").startsWith("Unexpected server response")
      )
        finish({
          answer: "ws closed",
          ...(c.refuse || c.garbage !== undefined ? {} : { failure: `upgrade failed: ${error.message}` }),
        });
    });
  });
}
