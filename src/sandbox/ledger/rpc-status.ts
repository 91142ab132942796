import { ledgerApiProtos } from "../../proto/ledger-api-protos.js";
import { STATUS_DETAILS_KEY } from "../../proto/status-details.js";
import { type ErrorOrigin, toServiceError } from "../grpc-status.js";
import type { GoogleRpcStatus } from "./ledger-records.js";

/**
 * A rejection as the google.rpc.Status a failed completion carries: the same status (code,
 * message and ErrorInfo/RequestInfo/ResourceInfo details) a synchronous call would have failed
 * with, so completion consumers and callers decode one form.
 */
export function rpcStatusOf(error: unknown, origin: ErrorOrigin): GoogleRpcStatus {
  const serviceError = toServiceError(error, origin);
  const raw = serviceError.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer;
  const type = ledgerApiProtos().type("google.rpc.Status");
  const decoded = type.decode(raw) as unknown as {
    code: number;
    message: string;
    details: { type_url: string; value: Uint8Array }[];
  };
  return {
    code: decoded.code,
    message: decoded.message,
    details: decoded.details.map((d) => ({ type_url: d.type_url, value: Buffer.from(d.value) })),
  };
}
