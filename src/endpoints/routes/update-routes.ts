import type { Availability } from "../../proto/api-version.js";
import { grpcRoute } from "../grpc-route.js";
import { transactionTree, wildcardTransactionFormat } from "../legacy-requests.js";
import type { Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const SERVICE = "UpdateService";

type Json = Record<string, unknown>;

/** The transaction of a JsGetUpdateResponse (legacy lookups answer only transactions). */
function transactionOf(json: unknown): unknown {
  return (json as { update?: { Transaction?: { value: unknown } } }).update?.Transaction?.value;
}

/** Legacy transaction lookups: `transactionFormat`, else every event of `requestingParties`. */
function legacyUpdateFormat(body: Json): Json {
  const format =
    body.transactionFormat ??
    wildcardTransactionFormat((body.requestingParties as string[] | undefined) ?? [], "acs-delta");
  return { includeTransactions: format };
}

/** The transaction forms of the update lookups, which Canton 3.6 no longer has (use update-by-id, update-by-offset). */
const REMOVED_IN_3_6: Availability = { removedIn: "3.6.0" };

export function updateRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/updates/update-by-offset",
      summary: "The update at an offset, as the update format selects it",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateByOffset",
      body: { kind: "json", schema: "GetUpdateByOffsetRequest" },
      responseSchema: "JsGetUpdateResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/updates/update-by-id",
      summary: "The update with an id, as the update format selects it",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateById",
      body: { kind: "json", schema: "GetUpdateByIdRequest" },
      responseSchema: "JsGetUpdateResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/updates/update-by-hash",
      summary:
        "The transaction an external party signed, by the hash it signed, as the update format selects it",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateByHash",
      body: { kind: "json", schema: "GetUpdateByHashRequest" },
      responseSchema: "JsGetUpdateResponse",
      availability: { since: "3.6.0" },
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/updates/get-updates-page",
      summary: "One page of updates between two offsets",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdatesPage",
      body: { kind: "json", schema: "GetUpdatesPageRequest" },
      responseSchema: "JsGetUpdatesPageResponse",
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/updates/transaction-by-offset",
      summary: "The transaction at an offset (deprecated: use update-by-offset)",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateByOffset",
      body: { kind: "json", schema: "GetTransactionByOffsetRequest" },
      responseSchema: "JsGetTransactionResponse",
      deprecated: true,
      availability: REMOVED_IN_3_6,
      toRequest: async ({ body }, fromJson) =>
        fromJson({ offset: (body as Json).offset, updateFormat: legacyUpdateFormat(body as Json) }),
      toAnswer: (json) => ({ transaction: transactionOf(json) }),
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/updates/transaction-by-id",
      summary: "The transaction with an id (deprecated: use update-by-id)",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateById",
      body: { kind: "json", schema: "GetTransactionByIdRequest" },
      responseSchema: "JsGetTransactionResponse",
      deprecated: true,
      availability: REMOVED_IN_3_6,
      toRequest: async ({ body }, fromJson) =>
        fromJson({ updateId: (body as Json).updateId, updateFormat: legacyUpdateFormat(body as Json) }),
      toAnswer: (json) => ({ transaction: transactionOf(json) }),
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/updates/transaction-tree-by-offset/{offset}",
      summary: "The transaction tree at an offset (deprecated: use update-by-offset)",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateByOffset",
      pathParams: [{ name: "offset", type: "int64" }],
      query: [{ name: "parties", type: "string[]" }],
      responseSchema: "JsGetTransactionTreeResponse",
      deprecated: true,
      availability: REMOVED_IN_3_6,
      toRequest: async ({ path, query }, fromJson) =>
        fromJson({
          offset: path.offset,
          updateFormat: {
            includeTransactions: wildcardTransactionFormat(
              (query.parties as string[] | undefined) ?? [],
              "ledger-effects",
            ),
          },
        }),
      toAnswer: (json) => ({ transaction: transactionTree(transactionOf(json)) }),
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/updates/transaction-tree-by-id/{update-id}",
      summary: "The transaction tree with an id (deprecated: use update-by-id)",
      tag: "Updates",
      service: SERVICE,
      rpc: "GetUpdateById",
      pathParams: [{ name: "update-id", type: "string" }],
      query: [{ name: "parties", type: "string[]" }],
      responseSchema: "JsGetTransactionTreeResponse",
      deprecated: true,
      availability: REMOVED_IN_3_6,
      toRequest: async ({ path, query }, fromJson) =>
        fromJson({
          updateId: path["update-id"],
          updateFormat: {
            includeTransactions: wildcardTransactionFormat(
              (query.parties as string[] | undefined) ?? [],
              "ledger-effects",
            ),
          },
        }),
      toAnswer: (json) => ({ transaction: transactionTree(transactionOf(json)) }),
    }),
  ];
}
