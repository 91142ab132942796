import { randomUUID } from "node:crypto";
import { type ApiVersion, type Availability, availableIn } from "../../proto/api-version.js";
import { LEDGER_API_PACKAGE, ledgerApiProtos } from "../../proto/ledger-api-protos.js";
import type {
  Commands__Output,
  CostEstimation,
  CostEstimationHints__Output,
  ExecuteSubmissionAndWaitForTransactionRequest__Output,
  ExecuteSubmissionAndWaitForTransactionResponse,
  ExecuteSubmissionAndWaitResponse,
  ExecuteSubmissionRequest__Output,
  ExecuteSubmissionResponse,
  PreparedTransaction__Output,
  PrepareSubmissionRequest__Output,
  PrepareSubmissionResponse,
  SinglePartySignatures__Output,
} from "../../proto/ledger-api-types.js";
import type { Requirement } from "../auth/authorization.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation } from "../grpc-handler.js";
import { uniqueIdentifierError } from "../identifiers.js";
import type { SubmissionOutcome } from "../ledger/command-submitter.js";
import type { InterpretedTransaction } from "../ledger/commands/command-engine.js";
import { deduplicationOf, validateCommands } from "../ledger/commands/command-validation.js";
import { routeTransaction } from "../ledger/commands/synchronizer-routing.js";
import { ledgerErrors } from "../ledger/ledger-errors.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { CompiledEventFormat } from "../ledger/reads/event-format.js";
import { projectTransaction, transactionMessage } from "../ledger/reads/transaction-projection.js";
import { compileTransactionFormat } from "../ledger/reads/update-format.js";
import { dateOf, timestamp } from "../protocol-values.js";
import type { ExternalParties } from "./external-parties.js";
import { HashingError } from "./hash-encoder.js";
import { interactiveErrors } from "./interactive-errors.js";
import { inputContractsOf, preparedTransactionOf } from "./prepared-transaction-builder.js";
import { hashPreparedTransactionV2, type PreparedTransactionHash } from "./prepared-transaction-hash.js";
import { verifySignature } from "./signing-keys.js";

/** An interpretation waiting for its signatures, by the transaction UUID of its metadata. */
interface Preparation {
  readonly interpreted: InterpretedTransaction;
  readonly effectiveAt: Date;
  readonly transactionHash: Buffer;
  readonly actAs: readonly string[];
  readonly inputContractIds: readonly string[];
  /** Committed once; a replay is a duplicate while deduplication remembers it, else refused. */
  executed: boolean;
}

/**
 * A participant records the hash of each executed prepared transaction for the lookups by hash
 * (and shows it as `transaction_hash`) from Canton 3.6 on.
 */
const TRANSACTION_HASH_LOOKUPS: Availability = { since: "3.6.0" };

/** Prepared but never executed transactions are forgotten, oldest first, beyond this many. */
const MAX_PENDING_PREPARATIONS = 10_000;

const V2 = "HASHING_SCHEME_VERSION_V2";

/** The fields the three execute requests share (AndWait's are ExecuteSubmissionRequest's). */
type ExecuteRequest = ExecuteSubmissionRequest__Output;

/**
 * InteractiveSubmissionService's prepare and execute. Prepare interprets the commands with the
 * native models as a submission would, commits nothing, and answers the PreparedTransaction
 * with its V2 hash; the interpretation is kept by transaction UUID. Execute recomputes the hash
 * from the prepared transaction it is given, checks every actAs party's signatures against the
 * keys and threshold it registered (Canton's FAILED_TO_EXECUTE_TRANSACTION texts), checks that
 * the transaction is the one interpreted, the input contracts, the ledger-time bounds and the
 * max record time, then deduplicates and commits as a command would.
 */
export function interactiveSubmissionMethods(
  runtime: LedgerRuntime,
  externalParties: ExternalParties,
  apiVersion: ApiVersion,
): ServiceImplementation["unary"] {
  const recordsTransactionHash = availableIn(TRANSACTION_HASH_LOOKUPS, apiVersion);
  const preparations = new Map<string, Preparation>();

  const prepare = async (
    request: PrepareSubmissionRequest__Output,
    context: CallContext,
  ): Promise<PrepareSubmissionResponse> => {
    // Canton's getPreparedSubmissionClaims: the token's own user; preparing only reads as its parties.
    await context.authorize({ kind: "own-user-id", userId: request.userId });
    await context.authorize({ kind: "read-as", parties: [...request.actAs, ...request.readAs] });
    const commands = validateCommands(
      {
        userId: request.userId,
        commandId: request.commandId,
        commands: request.commands,
        actAs: request.actAs,
        readAs: request.readAs,
        disclosedContracts: request.disclosedContracts,
        submissionId: "",
        workflowId: "",
      } as unknown as Commands__Output,
      context.caller.userId ?? "",
    );
    const scheme = request.hashingSchemeVersion ?? "HASHING_SCHEME_VERSION_UNSPECIFIED";
    if (scheme !== V2 && scheme !== "HASHING_SCHEME_VERSION_UNSPECIFIED") {
      throw errors.invalidField("hashing_scheme_version", `${scheme} is not supported on this synchronizer`);
    }
    if (request.synchronizerId !== "") synchronizerOf(runtime, request.synchronizerId);
    const now = new Date();
    const minLedgerTime = minLedgerTimeOf(request.minLedgerTime, now);
    const effectiveAt = minLedgerTime && minLedgerTime > now ? minLedgerTime : now;
    const interpreted = runtime.ledger.interpret(commands, effectiveAt);
    // Prepared for the synchronizer the transaction would be routed to, as Canton prepares it.
    const synchronizerId = routeTransaction(
      runtime.ledger.store,
      request.synchronizerId,
      interpreted.nodes,
      commands.actAs,
    );
    const inputs = inputContractsOf(interpreted);
    const transactionUuid = randomUUID();
    const prepared = preparedTransactionOf(interpreted, {
      actAs: commands.actAs,
      commandId: commands.commandId,
      synchronizerId,
      transactionUuid,
      preparationTime: now,
      minLedgerEffectiveTime: minLedgerTime,
      maxLedgerEffectiveTime: undefined,
      maxRecordTime: dateOf(request.maxRecordTime ?? null),
      inputContracts: inputs.map((contract) => ({
        contract,
        blob: runtime.ledger.createdEventBlob(contract),
      })),
    });
    const hash = hashOrReject(prepared, request.verboseHashing, interactiveErrors.prepareFailed);
    remember(preparations, transactionUuid, {
      interpreted,
      effectiveAt,
      transactionHash: hash.transactionHash,
      actAs: commands.actAs,
      inputContractIds: inputs.map((c) => c.contractId),
      executed: false,
    });
    return {
      preparedTransaction: prepared,
      preparedTransactionHash: hash.hash,
      hashingSchemeVersion: V2,
      ...(request.verboseHashing ? { hashingDetails: hash.details } : {}),
      ...(request.estimateTrafficCost?.disabled === true
        ? {}
        : { costEstimation: costOf(prepared, request.estimateTrafficCost ?? null, now) }),
    };
  };

  /**
   * Everything the three execute methods share, up to the ledger's outcome; `reader`: what the
   * answer's transaction format needs to be read.
   */
  const execute = async (request: ExecuteRequest, context: CallContext, reader?: Requirement) => {
    await context.authorize({ kind: "own-user-id", userId: request.userId });
    const prepared = request.preparedTransaction;
    if (prepared === null) throw errors.missingField("prepared_transaction");
    const metadata = prepared.metadata;
    if (metadata === null) throw errors.missingField("prepared_transaction.metadata");
    const actAs = [...new Set(metadata.submitterInfo?.actAs ?? [])];
    await context.authorize({ kind: "execute-as", parties: actAs });
    if (reader !== undefined) await context.authorize(reader);
    if (request.partySignatures === null) throw errors.missingField("party_signatures");
    if (request.submissionId === "") throw errors.missingField("submission_id");
    const userId = request.userId !== "" ? request.userId : (context.caller.userId ?? "");
    if (userId === "") throw errors.missingField("user_id");
    if (
      request.hashingSchemeVersion !== V2 &&
      request.hashingSchemeVersion !== "HASHING_SCHEME_VERSION_UNSPECIFIED"
    ) {
      throw errors.invalidField(
        "hashing_scheme_version",
        `${request.hashingSchemeVersion} is not supported on this synchronizer`,
      );
    }
    const synchronizerId = metadata.synchronizerId;
    if (uniqueIdentifierError(synchronizerId) !== undefined) {
      throw errors.invalidField(
        "synchronizer_id",
        `Unable to convert field \`synchronizer_id\`: Unable to parse \`${synchronizerId}\` as physical synchronizer id`,
      );
    }
    synchronizerOf(runtime, synchronizerId);
    const hash = hashOrReject(prepared, false, interactiveErrors.invalidExternalTransaction);
    verifyPartySignatures(externalParties, actAs, request.partySignatures.signatures, hash.hash);

    const uuid = metadata.transactionUuid;
    const preparation = preparations.get(uuid);
    if (preparation === undefined) {
      throw interactiveErrors.invalidExternalTransaction(
        `transaction ${uuid} was not prepared by this participant`,
      );
    }
    if (!hash.transactionHash.equals(preparation.transactionHash)) {
      throw interactiveErrors.invalidExternalTransaction(
        "the transaction differs from the one interpreted when it was prepared",
      );
    }
    if (actAs.slice().sort().join() !== [...preparation.actAs].sort().join()) {
      throw interactiveErrors.invalidExternalTransaction("the actAs parties differ from the prepared ones");
    }
    const given = new Set(metadata.inputContracts.map((c) => c.v1?.contractId));
    const missing = preparation.inputContractIds.filter((id) => !given.has(id));
    if (missing.length > 0)
      throw interactiveErrors.executeFailed(`Missing input contracts: ${missing.join(", ")}`);
    checkTimes(metadata, request, preparation.effectiveAt);

    const commands = {
      userId,
      commandId: metadata.submitterInfo?.commandId ?? "",
      submissionId: request.submissionId,
      workflowId: "",
      actAs,
      readAs: [],
      commands: [],
      disclosedContracts: [],
      deduplication: deduplicationOf(request),
      synchronizerId,
    };
    const outcome = runtime.ledger.submitInterpreted(
      commands,
      { traceId: context.traceId, participant: runtime.participantName },
      () => {
        if (preparation.executed) {
          throw interactiveErrors.invalidExternalTransaction(`transaction ${uuid} was already executed`);
        }
        stillActive(preparation.interpreted);
        return {
          interpreted: preparation.interpreted,
          effectiveAt: preparation.effectiveAt,
          externalTransactionHash: hash.hash,
        };
      },
      recordsTransactionHash ? hash.hash : undefined,
    );
    if (outcome.kind === "accepted") preparation.executed = true;
    return outcome;
  };

  const waited = (outcome: SubmissionOutcome) => {
    if (outcome.kind === "rejected") throw outcome.error;
    return outcome.update;
  };

  return {
    PrepareSubmission: prepare,
    ExecuteSubmission: async (request: ExecuteSubmissionRequest__Output, context: CallContext) => {
      await execute(request, context);
      return {} satisfies ExecuteSubmissionResponse;
    },
    ExecuteSubmissionAndWait: async (
      request: ExecuteSubmissionRequest__Output,
      context: CallContext,
    ): Promise<ExecuteSubmissionAndWaitResponse> => {
      const update = waited(await execute(request, context));
      return { updateId: update.updateId, completionOffset: update.offset };
    },
    ExecuteSubmissionAndWaitForTransaction: async (
      request: ExecuteSubmissionAndWaitForTransactionRequest__Output,
      context: CallContext,
    ): Promise<ExecuteSubmissionAndWaitForTransactionResponse> => {
      const format =
        request.transactionFormat === null
          ? undefined
          : compileTransactionFormat(runtime.registry, request.transactionFormat, "transaction_format");
      const tx = waited(await execute(request, context, format?.events.requirement()));
      const effective = format ?? {
        shape: "ACS_DELTA" as const,
        events: CompiledEventFormat.wildcard(runtime.registry, [...(tx.completion?.actAs ?? [])], true),
      };
      return {
        transaction:
          projectTransaction(tx, effective, runtime.events) ?? transactionMessage(tx, effective.events, []),
      } as ExecuteSubmissionAndWaitForTransactionResponse;
    },
  };
}

function remember(preparations: Map<string, Preparation>, uuid: string, preparation: Preparation): void {
  preparations.set(uuid, preparation);
  if (preparations.size > MAX_PENDING_PREPARATIONS) {
    const oldest = preparations.keys().next().value;
    if (oldest !== undefined) preparations.delete(oldest);
  }
}

function synchronizerOf(runtime: LedgerRuntime, requested: string): string {
  const known = runtime.ledger.store.synchronizers;
  if (requested === "") return known[0]!.id;
  if (!known.some((s) => s.id === requested)) throw errors.notConnectedToSynchronizer(requested);
  return requested;
}

function minLedgerTimeOf(
  minLedgerTime: PrepareSubmissionRequest__Output["minLedgerTime"],
  now: Date,
): Date | undefined {
  if (minLedgerTime?.time === "minLedgerTimeAbs") return dateOf(minLedgerTime.minLedgerTimeAbs ?? null);
  if (minLedgerTime?.time === "minLedgerTimeRel" && minLedgerTime.minLedgerTimeRel) {
    const { seconds, nanos } = minLedgerTime.minLedgerTimeRel;
    return new Date(now.getTime() + Number(seconds) * 1000 + Math.floor(nanos / 1e6));
  }
  return undefined;
}

function hashOrReject(
  prepared: PreparedTransaction__Output,
  trace: boolean,
  reject: (reason: string) => Error,
): PreparedTransactionHash {
  try {
    return hashPreparedTransactionV2(prepared, { trace });
  } catch (error) {
    if (error instanceof HashingError) throw reject(error.message);
    throw error;
  }
}

/**
 * Canton's check of external signatures: every actAs party signs; per party, signatures by its
 * registered keys that verify over the hash count once per key, and must reach its threshold.
 */
function verifyPartySignatures(
  externalParties: ExternalParties,
  actAs: readonly string[],
  given: readonly SinglePartySignatures__Output[],
  hash: Buffer,
): void {
  const byParty = new Map(given.map((s) => [s.party, s.signatures]));
  const unsigned = actAs.filter((party) => !byParty.has(party));
  if (unsigned.length > 0) {
    throw interactiveErrors.executeFailed(
      `The following actAs parties did not provide an external signature: ${unsigned.join(", ")}`,
    );
  }
  for (const party of actAs) {
    const keys = externalParties.keysOf(party);
    if (keys === undefined) {
      throw interactiveErrors.executeFailed(
        `No signing keys are registered for ${party}: it is not an external party`,
      );
    }
    const valid = new Set<string>();
    let invalid = 0;
    for (const signature of byParty.get(party) ?? []) {
      const key = keys.keys.find((k) => k.fingerprint === signature.signedBy);
      if (key !== undefined && verifySignature(key, signature, hash) === undefined)
        valid.add(key.fingerprint);
      else invalid += 1;
    }
    if (valid.size < keys.threshold) {
      throw interactiveErrors.executeFailed(
        `Received ${valid.size} valid signatures from distinct keys (${invalid} invalid), but expected at least ${keys.threshold} valid for ${party}. ` +
          `Transaction hash to be signed: ${hash.toString("hex")}. Ensure the correct transaction hash is signed with the correct key(s).`,
      );
    }
  }
}

const fromMicros = (micros: string | undefined) =>
  micros === undefined ? undefined : new Date(Number(BigInt(micros) / 1000n));

/** The ledger time must lie within the signed bounds, and the max record time must not be past. */
function checkTimes(
  metadata: NonNullable<PreparedTransaction__Output["metadata"]>,
  request: ExecuteRequest,
  preparedAt: Date,
): void {
  const now = new Date();
  const min = fromMicros(metadata.minLedgerEffectiveTime);
  const max = fromMicros(metadata.maxLedgerEffectiveTime);
  const requested = minLedgerTimeOf(request.minLedgerTime, now);
  const ledgerTime = [preparedAt, min, requested].reduce<Date>(
    (latest, t) => (t !== undefined && t > latest ? t : latest),
    preparedAt,
  );
  // The ledger time is chosen at or after the lower bound: only the upper bound can be missed.
  if (max !== undefined && ledgerTime > max) {
    throw interactiveErrors.ledgerTimeOutsideBounds(ledgerTime, min, max);
  }
  const maxRecordTime = fromMicros(metadata.maxRecordTime);
  if (maxRecordTime !== undefined && now > maxRecordTime) {
    throw interactiveErrors.maxRecordTimeExceeded(now, maxRecordTime);
  }
}

/** The contracts the transaction consumes must still be active when it is committed. */
function stillActive(interpreted: InterpretedTransaction): void {
  for (const contract of interpreted.archived.keys()) {
    if (contract.archivedOffset !== undefined) throw ledgerErrors.contractNotFound(contract.contractId);
  }
}

/** Signature sizes by algorithm (Ed25519 64 bytes, ECDSA DER at most 72 / 104). */
const SIGNATURE_BYTES: Record<string, number> = {
  SIGNING_ALGORITHM_SPEC_ED25519: 64,
  SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_256: 72,
  SIGNING_ALGORITHM_SPEC_EC_DSA_SHA_384: 104,
};

/**
 * The sandbox has no synchronizer traffic: its estimate is the bytes a confirmation request
 * would carry (the serialized prepared transaction and the expected signatures, one Ed25519
 * signature when none are hinted) and a fixed-size confirmation response.
 */
function costOf(prepared: PreparedTransaction__Output, hints: CostEstimationHints__Output | null, now: Date) {
  const type = ledgerApiProtos().type(`${LEDGER_API_PACKAGE}.interactive.PreparedTransaction`);
  const transactionBytes = type.encode(type.fromObject(prepared)).finish().length;
  const expected = hints?.expectedSignatures.length
    ? hints.expectedSignatures
    : ["SIGNING_ALGORITHM_SPEC_ED25519"];
  const signatureBytes = expected.reduce((sum, spec) => sum + (SIGNATURE_BYTES[spec] ?? 64), 0);
  const request = transactionBytes + signatureBytes;
  const response = 256;
  const estimation: CostEstimation = {
    estimationTimestamp: timestamp(now),
    confirmationRequestTrafficCostEstimation: request,
    confirmationResponseTrafficCostEstimation: response,
    totalTrafficCostEstimation: request + response,
  };
  return estimation;
}
