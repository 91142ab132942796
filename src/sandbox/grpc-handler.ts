import type * as grpc from "@grpc/grpc-js";
import { Metadata, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { expiryTimer } from "../jwt/expiry-timer.js";
import { type AuthenticatedCaller, type Authenticator, bearerTokenOf } from "./auth/authenticator.js";
import type { Authorizer, Requirement } from "./auth/authorization.js";
import { type CallContext, traceIdOf } from "./call-context.js";
import { errors } from "./errors.js";
import { isRedacted, SandboxError, toServiceError } from "./sandbox-error.js";

/** What every call needs besides its service: the auth step, the answering participant, the log. */
export interface HandlerEnvironment {
  readonly authenticator: Authenticator;
  readonly authorizer: Authorizer;
  readonly participantName: string;
  readonly log: Logger;
  /** Counts every call per method, for tests that prove how many calls a client made. */
  readonly calls?: CallCounter;
}

/** Calls per `Service/Method` (short service name): started, and still open (streams). */
export class CallCounter {
  readonly #started = new Map<string, number>();
  readonly #open = new Map<string, number>();

  /** Calls of `method` (e.g. `UpdateService/GetUpdates`) since the sandbox started. */
  started(method: string): number {
    return this.#started.get(method) ?? 0;
  }

  /** Calls of `method` not ended yet (a cancelled stream counts as ended). */
  open(method: string): number {
    return this.#open.get(method) ?? 0;
  }

  begin(fullName: string): () => void {
    const method = fullName.slice(fullName.lastIndexOf(".", fullName.indexOf("/")) + 1);
    this.#started.set(method, this.started(method) + 1);
    this.#open.set(method, this.open(method) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#open.set(method, this.open(method) - 1);
    };
  }
}

/** One unary method: a plain request object in, a plain response object out (PROTO_OPTIONS shape). */
type UnaryHandler<Req, Res> = (request: Req, context: CallContext) => Res | Promise<Res>;

/**
 * Where a server-streaming handler writes. `write` returns a promise only when the client's
 * HTTP/2 window is full: the handler awaits it (the 'drain' of the call), so a slow reader holds
 * the producer back and memory stays bounded.
 */
export interface StreamSink {
  write(message: unknown): Promise<void> | undefined;
  /** True once the client cancelled (or went away); the handler should stop. */
  readonly cancelled: boolean;
  /** Resolves when the client cancels: lets an idle handler stop waiting. */
  readonly whenCancelled: Promise<void>;
}

/**
 * A response already serialized to protobuf bytes: streams that send the same message to many
 * readers (or to the same benchmark reader again) encode it once. Only services bound through
 * `acceptingPreEncoded` understand it.
 */
export class PreEncoded {
  constructor(readonly bytes: Buffer) {}
}

/** The definition with serializers that pass PreEncoded responses through unchanged. */
export function acceptingPreEncoded(definition: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const wrapped: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(definition)) {
    const serialize = method.responseSerialize;
    wrapped[name] = {
      ...method,
      responseSerialize: (value: unknown) => (value instanceof PreEncoded ? value.bytes : serialize(value)),
    };
  }
  return wrapped;
}

/** One server-streaming method: resolves when the stream is complete, rejects with its error. */
type StreamHandler<Req> = (request: Req, context: CallContext, sink: StreamSink) => Promise<void>;

/** A service's implementation: its fully qualified name and its methods by proto name. */
export interface ServiceImplementation {
  readonly serviceName: string;
  // `never` accepts every handler's request type (parameters are contravariant).
  readonly unary: Readonly<Record<string, UnaryHandler<never, unknown>>>;
  readonly stream?: Readonly<Record<string, StreamHandler<never>>>;
}

/**
 * The grpc-js implementation of a service definition: each implemented unary or server-streaming
 * method runs auth -> handler -> Canton error mapping; every other method authenticates and then
 * answers UNIMPLEMENTED in Canton's error form, so the client learns which method is missing
 * rather than seeing a bare transport error.
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
    const streamHandler = implementation.stream?.[name];
    if (handler !== undefined && !method.requestStream && !method.responseStream) {
      bound[name] = unaryCall(fullName, handler as UnaryHandler<unknown, unknown>, env);
    } else if (streamHandler !== undefined && method.responseStream && !method.requestStream) {
      bound[name] = serverStreamingCall(fullName, streamHandler as StreamHandler<unknown>, env);
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
    const done = env.calls?.begin(method);
    run(method, traceId, call.metadata, env, (context) => handler(call.request, context)).then(
      (response) => {
        done?.();
        answerSafely(method, traceId, env, () => callback(null, response), callback);
      },
      (error: unknown) => {
        done?.();
        answerSafely(method, traceId, env, () => callback(failure(method, traceId, error, env)), callback);
      },
    );
  };
}

function serverStreamingCall(
  method: string,
  handler: StreamHandler<unknown>,
  env: HandlerEnvironment,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const traceId = traceIdOf(call.metadata);
    const fail = (error: unknown) => {
      const send = () => call.emit("error", failure(method, traceId, error, env));
      answerSafely(method, traceId, env, send, emitError(call));
    };
    const sink = streamSink(call, (validUntilMs, nowMs) =>
      fail(errors.accessTokenExpired(validUntilMs, nowMs)),
    );
    const done = env.calls?.begin(method);
    if (done) void sink.whenCancelled.then(done);
    run(method, traceId, call.metadata, env, (context) => {
      if (context.caller.expiresAt !== undefined) sink.expireAt(context.caller.expiresAt * 1000);
      return handler(call.request, context, sink);
    }).then(
      () => {
        done?.();
        sink.settled();
        if (!sink.cancelled) answerSafely(method, traceId, env, () => call.end(), emitError(call));
      },
      (error: unknown) => {
        done?.();
        sink.settled();
        if (!sink.cancelled) fail(error);
      },
    );
  };
}

/** The sink of one call, with the end of the call's token (Canton's ongoing stream authorization). */
interface ExpiringSink extends StreamSink {
  /**
   * From `expiresAtMs` (epoch ms) on, the stream is over: the handler sees it cancelled, nothing
   * more is written, and `onExpired` sends ACCESS_TOKEN_EXPIRED, once.
   */
  expireAt(expiresAtMs: number): void;
  /** The handler ended (or failed): no expiry any more. */
  settled(): void;
}

/**
 * Canton checks the token's expiry before each element it sends (UserBasedOngoingAuthorization),
 * so an idle stream there ends with its first element after the expiry; the sandbox also ends it
 * at the expiry itself, the earliest a client can be cut off.
 */
function streamSink(
  call: grpc.ServerWritableStream<unknown, unknown>,
  onExpired: (validUntilMs: number, nowMs: number) => void,
): ExpiringSink {
  let cancelled = false;
  let drained: Promise<void> | undefined;
  let expiresAtMs: number | undefined;
  let timer: { clear(): void } | undefined;
  let stop: () => void = () => undefined;
  const whenCancelled = new Promise<void>((resolve) => {
    stop = () => {
      cancelled = true;
      timer?.clear();
      resolve();
    };
    call.once("cancelled", stop);
  });
  const expire = () => {
    if (cancelled || expiresAtMs === undefined) return;
    stop();
    onExpired(expiresAtMs, Date.now());
  };
  return {
    get cancelled() {
      return cancelled;
    },
    whenCancelled,
    expireAt(at) {
      expiresAtMs = at;
      timer = expiryTimer(at, expire);
    },
    settled() {
      timer?.clear();
    },
    write(message) {
      if (cancelled) return undefined;
      // A timer may fire late: no element leaves after the expiry.
      if (expiresAtMs !== undefined && Date.now() >= expiresAtMs) {
        expire();
        return undefined;
      }
      if (call.write(message)) return undefined;
      // One waiter for the next drain, shared by writes made before it comes (or a cancel).
      drained ??= Promise.race([
        new Promise<void>((resolve) => call.once("drain", () => resolve())),
        whenCancelled,
      ]).finally(() => {
        drained = undefined;
      });
      return drained;
    },
  };
}

function unsupportedStream(
  method: string,
  env: HandlerEnvironment,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const traceId = traceIdOf(call.metadata);
    run(method, traceId, call.metadata, env, () => Promise.reject(errors.unsupported(method))).catch(
      (error: unknown) => {
        const send = () => call.emit("error", failure(method, traceId, error, env));
        answerSafely(method, traceId, env, send, emitError(call));
      },
    );
  };
}

/**
 * Methods Canton serves without a token (its UnsecuredServiceCallAuthTests): a client, or the
 * gateway learning which release it talks to, may ask them before it has one. A token sent
 * along is still judged as on any call.
 */
const UNSECURED_METHODS: ReadonlySet<string> = new Set([
  "com.daml.ledger.api.v2.VersionService/GetLedgerApiVersion",
]);

/** The caller of an unsecured method that came without a token. */
const ANONYMOUS: AuthenticatedCaller = { token: "", claims: {} };

async function run<T>(
  method: string,
  traceId: string,
  metadata: grpc.Metadata,
  env: HandlerEnvironment,
  body: (context: CallContext) => T | Promise<T>,
): Promise<T> {
  if (UNSECURED_METHODS.has(method) && bearerTokenOf(metadata) === undefined) {
    // No token, nothing to authenticate: the method is served to anyone, as Canton serves it.
    const refuse = () => env.authenticator.authenticate(metadata).then(() => undefined);
    return body({ method, traceId, caller: ANONYMOUS, metadata, authorize: refuse });
  }
  const caller = await env.authenticator.authenticate(metadata);
  env.log.debug({ method, tid: traceId, user: caller.userId }, "ledger api call");
  // As Canton's auth interceptor, before any service: the token's user must exist and be active
  // (PERMISSION_DENIED otherwise), public services and methods the sandbox lacks included.
  const authorize = (requirement: Requirement) => env.authorizer.require(caller, requirement);
  await authorize({ kind: "authenticated" });
  return body({
    method,
    traceId,
    caller,
    metadata,
    authorize,
  });
}

/**
 * Sends an answer; if grpc-js throws while sending it (an answer it cannot encode), the call
 * gets a plain INTERNAL error instead. The throw would otherwise escape every handler, as an
 * unhandled rejection, and stop the whole participant for one request.
 */
function answerSafely(
  method: string,
  traceId: string,
  env: HandlerEnvironment,
  send: () => void,
  fail: (error: grpc.ServiceError) => void,
): void {
  try {
    send();
  } catch (error) {
    env.log.error({ method, tid: traceId, err: error }, "sandbox could not send its answer");
    try {
      fail(unsendable(traceId));
    } catch (again) {
      env.log.error({ method, tid: traceId, err: again }, "sandbox could not send an INTERNAL error either");
    }
  }
}

const emitError =
  (call: grpc.ServerWritableStream<unknown, unknown>) =>
  (error: grpc.ServiceError): void => {
    call.emit("error", error);
  };

function unsendable(traceId: string): grpc.ServiceError {
  const details = `The participant could not send its answer; request ${traceId}`;
  return Object.assign(new Error(details), { code: status.INTERNAL, details, metadata: new Metadata() });
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
