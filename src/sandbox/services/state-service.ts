import type {
  EventFormat__Output,
  GetActiveContractsPageRequest__Output,
  GetActiveContractsPageResponse,
  GetActiveContractsRequest__Output,
  GetConnectedSynchronizersRequest__Output,
  GetConnectedSynchronizersResponse,
  GetLatestPrunedOffsetsResponse,
  GetLedgerEndResponse,
} from "../../proto/ledger-api-types.js";
import type { CallContext } from "../call-context.js";
import { errors } from "../errors.js";
import type { ServiceImplementation, StreamSink } from "../grpc-handler.js";
import { partyStringError, uniqueIdentifierError } from "../identifiers.js";
import type { LedgerRuntime } from "../ledger/ledger-runtime.js";
import { activeContracts } from "../ledger/reads/active-contracts.js";
import { CompiledEventFormat } from "../ledger/reads/event-format.js";
import { decodeToken, encodeToken } from "../ledger/reads/page-token.js";
import type { SandboxStore } from "../ledger/sandbox-store.js";
import { checkStartOffset } from "./start-offset.js";

/** The sandbox's page size limits for active contracts pages. */
const DEFAULT_ACS_PAGE_SIZE = 1000;
const MAX_ACS_PAGE_SIZE = 10_000;

/**
 * StateService: ledger end, pruning state, connected synchronizers and, with a ledger, the
 * active contract snapshot (streamed with continuation tokens, or in pages).
 */
export function stateService(store: SandboxStore, runtime?: LedgerRuntime): ServiceImplementation {
  return {
    serviceName: "com.daml.ledger.api.v2.StateService",
    stream: runtime === undefined ? {} : { GetActiveContracts: activeContractsStream(store, runtime) },
    unary: {
      ...(runtime === undefined ? {} : { GetActiveContractsPage: activeContractsPage(store, runtime) }),
      GetLedgerEnd: async (_request: object, context: CallContext): Promise<GetLedgerEndResponse> => {
        await context.authorize({ kind: "authenticated" });
        return { offset: store.ledgerEnd() };
      },
      GetLatestPrunedOffsets: async (
        _request: object,
        context: CallContext,
      ): Promise<GetLatestPrunedOffsetsResponse> => {
        await context.authorize({ kind: "authenticated" });
        return {
          participantPrunedUpToInclusive: store.latestPrunedOffset(),
          allDivulgedContractsPrunedUpToInclusive: store.latestPrunedOffset(),
        };
      },
      GetConnectedSynchronizers: async (
        request: GetConnectedSynchronizersRequest__Output,
        context: CallContext,
      ): Promise<GetConnectedSynchronizersResponse> => {
        // Canton: public without a party; with one, admin, idp admin or any right on the party.
        await context.authorize(
          request.party === ""
            ? { kind: "authenticated" }
            : {
                kind: "admin-or-operate-as",
                parties: [request.party],
                identityProviderId: request.identityProviderId,
              },
        );
        return connectedSynchronizers(store, request);
      },
    },
  };
}

type ConnectedSynchronizer = NonNullable<GetConnectedSynchronizersResponse["connectedSynchronizers"]>[number];

function connectedSynchronizers(
  store: SandboxStore,
  request: GetConnectedSynchronizersRequest__Output,
): GetConnectedSynchronizersResponse {
  const { party, participantId } = request;
  if (party !== "") {
    const error = partyStringError(party);
    if (error !== undefined) throw errors.invalidField("party", error);
  }
  if (participantId !== "") {
    // Canton parses it as the participant member `PAR::<uid>`.
    const error = uniqueIdentifierError(participantId);
    if (error !== undefined) throw errors.invalidField("participant_id", error);
  }
  const hostedHere = participantId === "" || participantId === store.participant.participantId;
  const connected = store.synchronizers.flatMap<ConnectedSynchronizer>((synchronizer) => {
    if (party === "") {
      return [
        {
          synchronizerAlias: synchronizer.alias,
          synchronizerId: synchronizer.id,
          permission: "PARTICIPANT_PERMISSION_UNSPECIFIED",
        },
      ];
    }
    // The sandbox knows no other participant's hostings: a party hosted elsewhere yields nothing.
    const permission = hostedHere ? store.party(party)?.permissions.get(synchronizer.id) : undefined;
    return permission === undefined
      ? []
      : [{ synchronizerAlias: synchronizer.alias, synchronizerId: synchronizer.id, permission }];
  });
  return { connectedSynchronizers: connected };
}

/** Continuation tokens and page tokens point after the contract with this creation index. */
interface AcsPosition {
  readonly after: number;
}

/** The creation index a listing goes on from: after the token's contract, or the first. */
function resumeAt(position: AcsPosition | undefined): number {
  return position === undefined ? 0 : position.after + 1;
}

async function snapshotFormat(
  runtime: LedgerRuntime,
  message: EventFormat__Output | null,
  context: CallContext,
) {
  const format = CompiledEventFormat.compile(runtime.registry, message, "event_format");
  await context.authorize(format.requirement());
  return format;
}

function checkActiveAt(store: SandboxStore, activeAt: number): void {
  checkStartOffset(store, activeAt, {
    field: "active_at_offset",
    kind: "Active at",
    prunedCause: (pruned) =>
      `Active contracts request at offset ${activeAt} precedes pruned offset ${pruned}`,
  });
}

function activeContractsStream(store: SandboxStore, runtime: LedgerRuntime) {
  return async (request: GetActiveContractsRequest__Output, context: CallContext, sink: StreamSink) => {
    const activeAt = Number(request.activeAtOffset);
    // Canton's StateServiceAuthorization wraps the service: the parties before the offset.
    const format = await snapshotFormat(runtime, request.eventFormat, context);
    checkActiveAt(store, activeAt);
    const requestKey = JSON.stringify(["acs", activeAt, format.key]);
    const from = resumeAt(
      decodeToken<AcsPosition>(request.streamContinuationToken, requestKey, "stream continuation token"),
    );
    for (const entry of activeContracts(runtime.ledger, runtime.events, format, activeAt, from)) {
      const drained = sink.write({
        ...entry.response,
        streamContinuationToken: encodeToken<AcsPosition>({ after: entry.contract.sequence }, requestKey),
      });
      if (drained !== undefined) await drained;
      if (sink.cancelled) return;
    }
  };
}

function activeContractsPage(store: SandboxStore, runtime: LedgerRuntime) {
  return async (
    request: GetActiveContractsPageRequest__Output,
    context: CallContext,
  ): Promise<GetActiveContractsPageResponse> => {
    const format = await snapshotFormat(runtime, request.eventFormat, context);
    const activeAt =
      request.activeAtOffset === undefined || request.activeAtOffset === null
        ? store.ledgerEnd()
        : Number(request.activeAtOffset);
    checkActiveAt(store, activeAt);
    const size = request.maxPageSize ?? DEFAULT_ACS_PAGE_SIZE;
    if (size <= 0 || size > MAX_ACS_PAGE_SIZE) {
      throw errors.invalidArgument(`max_page_size must be between 1 and ${MAX_ACS_PAGE_SIZE}, got ${size}`);
    }
    const requestKey = JSON.stringify(["acs-page", activeAt, format.key]);
    const from = resumeAt(decodeToken<AcsPosition>(request.pageToken, requestKey, "page token"));
    const page: object[] = [];
    let last = -1;
    let more = false;
    for (const entry of activeContracts(runtime.ledger, runtime.events, format, activeAt, from)) {
      if (page.length === size) {
        more = true;
        break;
      }
      page.push({ ...entry.response, streamContinuationToken: Buffer.alloc(0) });
      last = entry.contract.sequence;
    }
    return {
      activeContracts: page,
      activeAtOffset: activeAt,
      ...(more ? { nextPageToken: encodeToken<AcsPosition>({ after: last }, requestKey) } : {}),
    };
  };
}
