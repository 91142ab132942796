import type { Metadata } from "@grpc/grpc-js";
import { ledgerApiProtos } from "./ledger-api-protos.js";
import type { ErrorInfo__Output, RequestInfo__Output, ResourceInfo__Output } from "./ledger-api-types.js";

/**
 * The rich error model of the Ledger API: a google.rpc.Status carried in the
 * `grpc-status-details-bin` trailer, its details packed as google.protobuf.Any. The sandbox
 * writes it; the gateway reads it to build a JsCantonError. Shared so both agree on the wire.
 */
export const STATUS_DETAILS_KEY = "grpc-status-details-bin";

// The details as protobufjs decodes them (defaults filled in): the generated output shapes.
type ErrorInfo = ErrorInfo__Output;
type RequestInfo = RequestInfo__Output;
type ResourceInfo = ResourceInfo__Output;
/** RetryInfo's Duration as whole seconds: all the JSON API shows of it. */
interface RetryInfo {
  retryDelaySeconds: number;
}

export interface StatusDetails {
  code: number;
  message: string;
  errorInfos: ErrorInfo[];
  requestInfos: RequestInfo[];
  retryInfos: RetryInfo[];
  resourceInfos: ResourceInfo[];
}

const TYPE_URL_PREFIX = "type.googleapis.com/";

export function encodeStatusDetails(details: StatusDetails): Buffer {
  const protos = ledgerApiProtos();
  const pack = (typeName: string, value: object) => {
    const type = protos.type(typeName);
    // protobufjs bundles google.protobuf.Any with its proto field name, `type_url`.
    return { type_url: TYPE_URL_PREFIX + typeName, value: type.encode(type.fromObject(value)).finish() };
  };
  const any = [
    ...details.errorInfos.map((v) => pack("google.rpc.ErrorInfo", v)),
    ...details.requestInfos.map((v) => pack("google.rpc.RequestInfo", v)),
    ...details.retryInfos.map((v) =>
      pack("google.rpc.RetryInfo", { retryDelay: durationOf(v.retryDelaySeconds) }),
    ),
    ...details.resourceInfos.map((v) => pack("google.rpc.ResourceInfo", v)),
  ];
  const status = protos.type("google.rpc.Status");
  return Buffer.from(
    status.encode(status.fromObject({ code: details.code, message: details.message, details: any })).finish(),
  );
}

/** Reads the rich status from a call's trailers; undefined when the server sent none or garbage. */
export function decodeStatusDetails(metadata: Metadata | undefined): StatusDetails | undefined {
  const raw = metadata?.get(STATUS_DETAILS_KEY)[0];
  if (!Buffer.isBuffer(raw)) return undefined;
  try {
    return decode(raw);
  } catch {
    return undefined;
  }
}

function decode(raw: Buffer): StatusDetails {
  const protos = ledgerApiProtos();
  const status = protos.type("google.rpc.Status").decode(raw) as unknown as {
    code: number;
    message: string;
    details: { type_url: string; value: Uint8Array }[];
  };
  const result: StatusDetails = {
    code: status.code,
    message: status.message,
    errorInfos: [],
    requestInfos: [],
    retryInfos: [],
    resourceInfos: [],
  };
  for (const any of status.details ?? []) {
    const typeName = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
    const unpack = <T>() =>
      protos
        .type(typeName)
        .toObject(protos.type(typeName).decode(any.value), { longs: Number, defaults: true }) as T;
    switch (typeName) {
      case "google.rpc.ErrorInfo":
        result.errorInfos.push(unpack<ErrorInfo>());
        break;
      case "google.rpc.RequestInfo":
        result.requestInfos.push(unpack<RequestInfo>());
        break;
      case "google.rpc.RetryInfo": {
        const delay = unpack<{ retryDelay?: { seconds?: number; nanos?: number } }>().retryDelay;
        result.retryInfos.push({ retryDelaySeconds: (delay?.seconds ?? 0) + (delay?.nanos ?? 0) / 1e9 });
        break;
      }
      case "google.rpc.ResourceInfo":
        result.resourceInfos.push(unpack<ResourceInfo>());
        break;
      default:
        // Other detail kinds (DebugInfo, ...) carry nothing the JSON error shows.
        break;
    }
  }
  return result;
}

function durationOf(seconds: number): { seconds: number; nanos: number } {
  const whole = Math.floor(seconds);
  return { seconds: whole, nanos: Math.round((seconds - whole) * 1e9) };
}
