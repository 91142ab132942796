import type { Availability } from "../proto/api-version.js";
import type { GetUpdatesRequest } from "../proto/ledger-api-types.js";
import { ledgerStream } from "./ledger-stream.js";
import { activeContractsRequest, updatesRequest, updateTreesResponse } from "./legacy-requests.js";
import type { RouteDeps } from "./route-deps.js";
import type { StreamEndpoint } from "./stream-endpoint.js";
import { caseOffset, casePosition } from "./stream-position.js";

/** The deprecated forms of the update stream, which Canton 3.6 no longer has. */
const REMOVED_IN_3_6: Availability = { removedIn: "3.6.0" };

/** Without `endInclusive` an update stream follows the ledger end forever. */
const openEnded = (request: unknown) => (request as GetUpdatesRequest).endInclusive === undefined;

/** The six stream endpoints of the JSON Ledger API, each a WebSocket and an HTTP list twin. */
export function ledgerStreamEndpoints(deps: RouteDeps): StreamEndpoint[] {
  const updates = (path: string, summary: string, deprecated: boolean, availability?: Availability) =>
    ledgerStream(deps, {
      path,
      summary,
      service: "UpdateService",
      rpc: "GetUpdates",
      requestSchema: "GetUpdatesRequest",
      responseSchema: "JsGetUpdatesResponse",
      deprecated,
      ...(availability ? { availability } : {}),
      toRequest: (request) => updatesRequest(request, false),
      idleByDefault: openEnded,
      offsetOf: caseOffset("update", deps.json.transcoded),
      position: casePosition("update"),
      share: "updates",
    });
  return [
    ledgerStream(deps, {
      path: "/v2/commands/completions",
      // Canton 3.5.10 deprecates it in prose only: the spec has no `deprecated: true` for it.
      summary:
        "Completions of the commands submitted by a user for some parties (deprecated: use /v2/commands/command-completions)",
      service: "CommandCompletionService",
      rpc: "CompletionStream",
      requestSchema: "CompletionStreamRequest",
      responseSchema: "CompletionStreamResponse",
      idleByDefault: () => true,
      offsetOf: caseOffset("completionResponse", deps.json.transcoded),
      position: casePosition("completionResponse"),
      share: "completions",
      sharedPerUser: true,
    }),
    ledgerStream(deps, {
      path: "/v2/commands/command-completions",
      summary: "Completions of the commands of every user for some parties (Canton 3.5.10)",
      availability: { since: "3.5.10" },
      service: "CommandCompletionService",
      rpc: "GetCompletions",
      requestSchema: "GetCompletionsRequest",
      responseSchema: "CompletionStreamResponse",
      idleByDefault: () => true,
      offsetOf: caseOffset("completionResponse", deps.json.transcoded),
      position: casePosition("completionResponse"),
      share: "completions",
    }),
    ledgerStream(deps, {
      path: "/v2/state/active-contracts",
      summary: "The active contracts at an offset; then follow /v2/updates from that offset",
      service: "StateService",
      rpc: "GetActiveContracts",
      requestSchema: "GetActiveContractsRequest",
      responseSchema: "JsGetActiveContractsResponse",
      toRequest: activeContractsRequest,
      idleByDefault: () => false,
      // The snapshot resumes from a continuation token, not an offset.
      offsetOf: (element) =>
        (JSON.parse(element) as { streamContinuationToken?: string }).streamContinuationToken,
      startAfter: (request, id) => ({ ...(request as object), streamContinuationToken: id }),
    }),
    updates("/v2/updates", "The ledger's updates as the update format selects them", false),
    updates("/v2/updates/flats", "Flat transactions (deprecated: use /v2/updates)", true, REMOVED_IN_3_6),
    ledgerStream(deps, {
      path: "/v2/updates/trees",
      summary: "Transaction trees (deprecated: use /v2/updates with the ledger-effects shape)",
      service: "UpdateService",
      rpc: "GetUpdates",
      requestSchema: "GetUpdatesRequest",
      responseSchema: "JsGetUpdateTreesResponse",
      deprecated: true,
      availability: REMOVED_IN_3_6,
      toRequest: (request) => updatesRequest(request, true),
      toElement: updateTreesResponse,
      idleByDefault: openEnded,
      offsetOf: caseOffset("update", deps.json.transcoded),
      position: casePosition("update"),
      share: "updates",
    }),
  ];
}
