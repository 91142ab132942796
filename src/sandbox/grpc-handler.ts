import type * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { Authenticator } from "./auth/authenticator.js";
import type { Authorizer } from "./auth/authorization.js";
import { type CallContext, traceIdOf } from "./call-context.js";
import { isRedacted } from "./error-codes.js";
import { errors } from "./errors.js";
import { toServiceError } from "./grpc-status.js";
import { SandboxError } from "./sandbox-error.js";

/** What every call needs besides its service: the auth step, the answering participant, the log. */
export interface HandlerEnvironment {
  readonly authenticator: Authenticator;
  readonly authorizer: Authorizer;
  readonly participantName: string;
  readonly log: Logger;
}

/** One unary method: a plain request object in, a plain response object out (PROTO_OPTIONS shape). */
export type UnaryHandler<Req, Res> = (request: Req, context: CallContext) => Res | Promise<Res>;

/** A service's implementation: its fully qualified name and its unary methods by proto name. */
export interface ServiceImplementation {
  readonly serviceName: string;
  // `never` accepts every handler's request type (parameters are contravariant).
  readonly unary: Readonly<Record<string, UnaryHandler<never, unknown>>>;
}

/**
 * The grpc-js implementation of a service definition: each implemented unary method runs
 * auth -> handler -> Canton error mapping; every other method (streams included, until later
 * issues add them) authenticates and then answers UNIMPLEMENTED in Canton's error form, so the
 * client learns which method is missing rather than seeing a bare transport error.
 */
export function bindService(
  definition: grpc.ServiceDefinition,
  implementation: ServiceImplementation,
  env: HandlerEnvironment,
): grpc.UntypedServiceImplementation {
  const bound: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(definition)) {
    const fullName = `${implementation.serviceName}/${name}`;
    const handler = implementation.unary[name];
    if (handler !== undefined && !method.requestStream && !method.responseStream) {
      bound[name] = unaryCall(fullName, handler as UnaryHandler<unknown, unknown>, env);
    } else if (method.responseStream && !method.requestStream) {
      bound[name] = unsupportedStream(fullName, env);
    } else {
      bound[name] = unaryCall(fullName, () => Promise.reject(errors.unsupported(fullName)), env);
    }
  }
  return bound;
}

function unaryCall(
  method: string,
  handler: UnaryHandler<unknown, unknown>,
  env: HandlerEnvironment,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const traceId = traceIdOf(call.metadata);
    run(method, traceId, call.metadata, env, (context) => handler(call.request, context)).then(
      (response) => callback(null, response),
      (error: unknown) => callback(failure(method, traceId, error, env)),
    );
  };
}

function unsupportedStream(
  method: string,
  env: HandlerEnvironment,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const traceId = traceIdOf(call.metadata);
    run(method, traceId, call.metadata, env, () => Promise.reject(errors.unsupported(method))).catch(
      (error: unknown) => call.emit("error", failure(method, traceId, error, env)),
    );
  };
}

async function run<T>(
  method: string,
  traceId: string,
  metadata: grpc.Metadata,
  env: HandlerEnvironment,
  body: (context: CallContext) => T | Promise<T>,
): Promise<T> {
  const caller = await env.authenticator.authenticate(metadata);
  env.log.debug({ method, tid: traceId, user: caller.userId }, "ledger api call");
  return body({
    method,
    traceId,
    caller,
    metadata,
    authorize: (requirement) => env.authorizer.require(caller, requirement),
  });
}

/** Logs the full error (Canton logs every rejection, redacted ones included) and encodes it. */
function failure(
  method: string,
  traceId: string,
  error: unknown,
  env: HandlerEnvironment,
): grpc.ServiceError {
  if (error instanceof SandboxError) {
    const level = isRedacted(error.code) ? "warn" : "info";
    env.log[level]({ method, tid: traceId, code: error.code.id }, error.cause);
  } else {
    env.log.error({ method, tid: traceId, err: error }, "sandbox handler failed");
  }
  return toServiceError(error, { traceId, participant: env.participantName });
}
