/**
 * How a browser's refused WebSocket ends. A browser hides the status of a refused upgrade from
 * the page (it sees close 1006 and nothing else), so an upgrade that carries `Origin` is refused
 * after the upgrade: the JsCantonError frame, then this close, whose code and reason the page
 * can read. The code is 4000 + the HTTP status a non-browser client gets for the same refusal
 * (the convention of graphql-ws and others: 4401, 4403, 4429); the reason names the cause, so
 * that "renew your token" is told from "this page's origin is not allowed" and "try later".
 */
export interface RefusalClose {
  readonly code: number;
  readonly reason: string;
}

/** RFC 6455: a close reason is at most 123 bytes. */
const MAX_REASON_BYTES = 123;

export function refusalClose(status: number, errorCode: string, tokenExpired: boolean): RefusalClose {
  const code = status >= 400 && status <= 599 ? 4000 + status : 4500;
  return { code, reason: reasonOf(status, errorCode, tokenExpired) };
}

function reasonOf(status: number, errorCode: string, tokenExpired: boolean): string {
  if (status === 401) return tokenExpired ? "token expired" : "unauthenticated";
  if (status === 403)
    return errorCode === "CORS_ORIGIN_NOT_ALLOWED" ? "forbidden origin" : "permission denied";
  if (status === 429) return "over a cap";
  return Buffer.byteLength(errorCode) <= MAX_REASON_BYTES ? errorCode : "refused";
}
