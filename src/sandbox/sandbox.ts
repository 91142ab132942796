import * as grpc from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import { CANTON_MAX_TOKEN_LIFETIME_MS } from "../jwt/token-lifetime.js";
import type { TokenVerificationOptions } from "../jwt/token-verifier.js";
import { type ApiVersion, DEFAULT_API_VERSION } from "../proto/api-version.js";
import { LEDGER_API_PACKAGE, ledgerApiProtos } from "../proto/ledger-api-protos.js";
import { rpcAvailableIn } from "../proto/rpc-availability.js";
import type { Authenticator } from "./auth/authenticator.js";
import type { Authorizer } from "./auth/authorization.js";
import {
  acceptingPreEncoded,
  bindService,
  CallCounter,
  type HandlerEnvironment,
  type ServiceImplementation,
} from "./grpc-handler.js";
import { identityAndAccess } from "./identity-and-access.js";
import { ExternalParties } from "./interactive/external-parties.js";
import { externalPartyMethods } from "./interactive/external-party-service.js";
import { interactiveSubmissionMethods } from "./interactive/interactive-submission.js";
import { createLedgerRuntime } from "./ledger/ledger-runtime.js";
import { type PreloadOptions, type PreloadResult, preloadTicks } from "./ledger/preload.js";
import { SandboxStore } from "./ledger/sandbox-store.js";
import { PackageStore } from "./packages/package-store.js";
import { preloadSamplePackage } from "./packages/preload.js";
import { commandCompletionService } from "./services/command-completion-service.js";
import { commandService } from "./services/command-service.js";
import { commandSubmissionService } from "./services/command-submission-service.js";
import { contractService } from "./services/contract-service.js";
import { eventQueryService } from "./services/event-query-service.js";
import { interactiveSubmissionService } from "./services/interactive-submission-service.js";
import { joseService } from "./services/jose-service.js";
import { packageManagementService } from "./services/package-management-service.js";
import { packageService } from "./services/package-service.js";
import { participantPruningService } from "./services/participant-pruning-service.js";
import { partyManagementService } from "./services/party-management-service.js";
import { stateService } from "./services/state-service.js";
import { updateService } from "./services/update-service.js";
import { versionService } from "./services/version-service.js";

export interface SandboxOptions {
  /** The Canton release whose Ledger API the sandbox speaks; DEFAULT_API_VERSION when absent. */
  apiVersion?: ApiVersion;
  /**
   * What GetLedgerApiVersion reports instead of `apiVersion` (which the sandbox still speaks):
   * for tests of a gateway in front of a release it does not know (`3.7.2`, `3.5.7`) or a
   * pre-release (`3.6.0-SNAPSHOT`). Absent: `apiVersion` itself.
   */
  reportedVersion?: string;
  /** 0 or absent: an ephemeral port. */
  port?: number;
  host?: string;
  /** Canton's own sandbox participant is called `sandbox`. */
  participantName?: string;
  /** The connected synchronizers' aliases; two by default (Canton's ids are formed from them). */
  synchronizerAliases?: readonly string[];
  log?: Logger;
  /**
   * Token verification; default `unsafe` (any signature, but a valid Ledger API token). The
   * verifying modes refuse tokens past `maxTokenLifetimeMs` (default Canton's 5 minutes; 0: no
   * limit) and tokens without `exp`, as Canton does; `unsafe` accepts any lifetime.
   */
  auth?: TokenVerificationOptions;
  /** Canton's default is 16. */
  maxIdentityProviderConfigs?: number;
  /** Replaces the token verification of `auth` altogether. */
  authenticator?: Authenticator;
  /** Defaults to the token user's rights, as a secured participant enforces them. */
  authorizer?: Authorizer;
  /**
   * Idle time before a tailing stream looks for an OffsetCheckpoint to send: Canton's
   * `idle-stream-offset-checkpoint-timeout`, one minute by default. Tests that wait for
   * checkpoints set it short.
   */
  idleStreamOffsetCheckpointTimeoutMs?: number;
  /** Bulk-created `Bench:Tick` contracts for benchmarks, before the server listens. */
  preload?: PreloadOptions;
}

export interface RunningSandbox {
  readonly port: number;
  readonly store: SandboxStore;
  /** Archives and vetting state (the sample package preloaded and vetted). */
  readonly packages: PackageStore;
  /** What `preload` created (and the party owning it). */
  readonly preloaded: PreloadResult | undefined;
  /** Calls per method, started and open: how many calls a client really made. */
  readonly calls: CallCounter;
  stop(): Promise<void>;
}

/**
 * Starts the in-memory participant: a grpc-js server speaking the Ledger API v2 services that
 * exist so far, with the methods of its release (`apiVersion`). Services and methods not
 * registered at all (not implemented, or not in the release) answer grpc-js's plain
 * UNIMPLEMENTED.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const log = options.log ?? pino({ level: "silent" });
  const store = new SandboxStore({
    participantName: options.participantName ?? "sandbox",
    synchronizerAliases: options.synchronizerAliases ?? ["synchronizer-1", "synchronizer-2"],
  });
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION;
  const access = identityAndAccess(store, {
    log,
    apiVersion,
    ...(options.auth ? { verification: withCantonLifetime(options.auth) } : {}),
    ...(options.maxIdentityProviderConfigs
      ? { maxIdentityProviderConfigs: options.maxIdentityProviderConfigs }
      : {}),
  });
  const calls = new CallCounter();
  const env: HandlerEnvironment = {
    calls,
    authenticator: options.authenticator ?? access.authenticator,
    authorizer: options.authorizer ?? access.authorizer,
    participantName: store.participant.name,
    log,
  };
  const packages = new PackageStore(store.synchronizers.map((s) => s.id));
  preloadSamplePackage(packages);
  const ledger = createLedgerRuntime(store, {
    ...(options.idleStreamOffsetCheckpointTimeoutMs !== undefined
      ? { idleStreamOffsetCheckpointTimeoutMs: options.idleStreamOffsetCheckpointTimeoutMs }
      : {}),
  });
  const preloaded = options.preload && preloadTicks(ledger, store, options.preload);
  const externalParties = new ExternalParties();
  const services: ServiceImplementation[] = [
    packageService(store, packages),
    packageManagementService(store, packages),
    interactiveSubmissionService(
      store,
      packages,
      interactiveSubmissionMethods(ledger, externalParties, apiVersion),
    ),
    versionService(options.reportedVersion ?? apiVersion),
    joseService(store, externalParties),
    stateService(store, ledger),
    commandService(ledger),
    commandSubmissionService(ledger),
    commandCompletionService(ledger),
    updateService(ledger),
    eventQueryService(ledger),
    contractService(ledger),
    participantPruningService(store),
    partyManagementService(store, {
      users: access.partyUsers,
      identityProviderExists: (id) => access.idps.exists(id),
      externalParties: externalPartyMethods({
        store,
        externalParties,
        users: access.partyUsers,
        identityProviderExists: (id) => access.idps.exists(id),
      }),
    }),
    ...access.services,
  ];

  const protos = ledgerApiProtos();
  const server = new grpc.Server();
  for (const service of services) {
    const definition = ofRelease(protos.service(service.serviceName), service.serviceName, apiVersion);
    if (Object.keys(definition).length === 0) continue;
    server.addService(acceptingPreEncoded(definition), bindService(definition, service, env));
  }
  const host = options.host ?? "127.0.0.1";
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      `${host}:${options.port ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    );
  });
  log.info({ host, port, participantId: store.participant.participantId }, "sandbox listening");

  return {
    port,
    store,
    packages,
    preloaded,
    calls,
    stop: () =>
      new Promise<void>((resolve) => {
        // Graceful first; calls still open after a second (e.g. streams) are cut.
        const timer = setTimeout(() => server.forceShutdown(), 1_000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/**
 * The methods of a service that a participant of `version` has. The others are not registered at
 * all, so grpc-js answers them as any server without the method does (UNIMPLEMENTED, no Canton
 * error details), which is what a client of a real participant of that release sees.
 */
function ofRelease(
  definition: grpc.ServiceDefinition,
  serviceName: string,
  version: ApiVersion,
): grpc.ServiceDefinition {
  const service = serviceName.slice(LEDGER_API_PACKAGE.length + 1);
  return Object.fromEntries(
    Object.entries(definition).filter(([rpc]) => rpcAvailableIn(service, rpc, version)),
  ) as grpc.ServiceDefinition;
}

/** The lifetime rule of `auth`: Canton's default in the verifying modes, none in `unsafe`. */
function withCantonLifetime(auth: TokenVerificationOptions): TokenVerificationOptions {
  const { maxTokenLifetimeMs, ...rest } = auth;
  if (auth.mode === "unsafe") return rest;
  return { ...rest, maxTokenLifetimeMs: maxTokenLifetimeMs ?? CANTON_MAX_TOKEN_LIFETIME_MS };
}
