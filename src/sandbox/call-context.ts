import { randomBytes } from "node:crypto";
import type { Metadata } from "@grpc/grpc-js";
import type { AuthenticatedCaller } from "./auth/authenticator.js";
import type { Requirement } from "./auth/authorization.js";

/** What a handler knows about the call it serves, besides the request. */
export interface CallContext {
  /** Fully qualified method, e.g. `com.daml.ledger.api.v2.VersionService/GetLedgerApiVersion`. */
  readonly method: string;
  /** W3C trace id (32 hex): the client's from `traceparent`, else a fresh one, as Canton does. */
  readonly traceId: string;
  readonly caller: AuthenticatedCaller;
  readonly metadata: Metadata;
  /** Throws PERMISSION_DENIED (or UNAUTHENTICATED) unless the caller meets the requirement. */
  authorize(requirement: Requirement): Promise<void>;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id of a call: errors carry it as `tid` and (by default) as correlation id. */
export function traceIdOf(metadata: Metadata): string {
  const header = metadata.get("traceparent")[0];
  const match = typeof header === "string" ? TRACEPARENT.exec(header.trim()) : null;
  const id = match?.[1];
  return id !== undefined && !/^0+$/.test(id) ? id : randomBytes(16).toString("hex");
}
