import { invalidArgumentError } from "../errors/index.js";

/**
 * The request forms Canton 3.5 still accepts on the JSON side although the gRPC API dropped
 * them: `filter` + `verbose` instead of `updateFormat` / `eventFormat`, transaction trees,
 * `requestingParties`. Each is rewritten into the 3.5 form before the request goes to gRPC,
 * the way Canton's JSON API does it (JsUpdateService, JsStateService, LegacyDTOs).
 */
type Json = Record<string, unknown>;
type Filters = { cumulative?: Json[] };
type TransactionFilter = { filtersByParty?: Record<string, Filters>; filtersForAnyParty?: Filters };

const ACS_DELTA = "TRANSACTION_SHAPE_ACS_DELTA";
const LEDGER_EFFECTS = "TRANSACTION_SHAPE_LEDGER_EFFECTS";
const WILDCARD = { identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: false } } } };

/** Trees need every event: a filter without a wildcard gets one (Canton's `addWildcardCond`). */
function withWildcard(filters: Filters | undefined, forTrees: boolean): Filters | undefined {
  if (!filters || !forTrees) return filters;
  const cumulative = filters.cumulative ?? [];
  const hasWildcard = cumulative.some(
    (f) => "WildcardFilter" in ((f.identifierFilter as Json | undefined) ?? {}),
  );
  return hasWildcard ? filters : { ...filters, cumulative: [...cumulative, WILDCARD] };
}

function eventFormatOf(filter: TransactionFilter, verbose: boolean, forTrees: boolean): Json {
  const byParty = Object.fromEntries(
    Object.entries(filter.filtersByParty ?? {}).map(([party, f]) => [party, withWildcard(f, forTrees)]),
  );
  const format: Json = { filtersByParty: byParty, verbose };
  const anyParty = withWildcard(filter.filtersForAnyParty, forTrees);
  if (anyParty) format.filtersForAnyParty = anyParty;
  return format;
}

/** A request in one of its two forms: the 3.5 format, or the legacy filter and verbose flag. */
type RequestForm =
  | { readonly rest: Json; readonly format: unknown }
  | { readonly rest: Json; readonly filter: TransactionFilter; readonly verbose: boolean };

/**
 * Which form a request uses, refused as Canton refuses it when it mixes the two or has neither.
 * `formatKey` is the 3.5 field (`updateFormat`, `eventFormat`); its errors name it in snake case.
 */
function requestForm(json: unknown, formatKey: "updateFormat" | "eventFormat"): RequestForm {
  const { filter, verbose, [formatKey]: format, ...rest } = json as Json;
  const field = formatKey === "updateFormat" ? "update_format" : "event_format";
  const either = `Please use either backwards compatible arguments (filter and verbose) or ${field}`;
  if (format !== undefined && filter !== undefined) {
    throw invalidArgumentError(`Both ${field} and filter are set. ${either}, but not both.`);
  }
  if (format !== undefined && verbose === true) {
    throw invalidArgumentError(`Both ${field} and verbose are set. ${either}, but not both.`);
  }
  if (format !== undefined) return { rest, format };
  if (filter === undefined) {
    throw invalidArgumentError(`Either filter/verbose or ${field} is required. ${either}.`);
  }
  return { rest, filter: filter as TransactionFilter, verbose: verbose === true };
}

/** GetUpdatesRequest in either form -> the 3.5 form (`updateFormat`). */
export function updatesRequest(json: unknown, forTrees: boolean): Json {
  const form = requestForm(json, "updateFormat");
  if ("format" in form) return { ...form.rest, updateFormat: form.format };
  const eventFormat = eventFormatOf(form.filter, form.verbose, forTrees);
  return {
    ...form.rest,
    updateFormat: {
      includeTransactions: { eventFormat, transactionShape: forTrees ? LEDGER_EFFECTS : ACS_DELTA },
      includeReassignments: eventFormat,
    },
  };
}

/** GetActiveContractsRequest in either form -> the 3.5 form (`eventFormat`). */
export function activeContractsRequest(json: unknown): Json {
  const form = requestForm(json, "eventFormat");
  if ("format" in form) return { ...form.rest, eventFormat: form.format };
  const legacy = form.filter;
  const format: Json = { filtersByParty: legacy.filtersByParty ?? {}, verbose: form.verbose };
  if (legacy.filtersForAnyParty) format.filtersForAnyParty = legacy.filtersForAnyParty;
  return { ...form.rest, eventFormat: format };
}

/** The format of pointwise legacy lookups: every event the parties see, verbose. */
export function wildcardTransactionFormat(
  parties: readonly string[],
  shape: "acs-delta" | "ledger-effects",
): Json {
  return {
    eventFormat: {
      filtersByParty: Object.fromEntries(parties.map((party) => [party, { cumulative: [WILDCARD] }])),
      verbose: true,
    },
    transactionShape: shape === "acs-delta" ? ACS_DELTA : LEDGER_EFFECTS,
  };
}

/** A JsTransaction (LEDGER_EFFECTS) as the deprecated JsTransactionTree: events keyed by node id. */
export function transactionTree(transaction: unknown): Json {
  const tx = transaction as Json & { events?: Json[] };
  const eventsById: Record<string, Json> = {};
  for (const event of tx.events ?? []) {
    const created = event.CreatedEvent as { nodeId: number } | undefined;
    const exercised = event.ExercisedEvent as { nodeId: number } | undefined;
    if (created) eventsById[created.nodeId] = { CreatedTreeEvent: { value: created } };
    else if (exercised) eventsById[exercised.nodeId] = { ExercisedTreeEvent: { value: exercised } };
  }
  const tree: Json = {
    updateId: tx.updateId,
    effectiveAt: tx.effectiveAt,
    offset: tx.offset,
    eventsById,
    synchronizerId: tx.synchronizerId,
    recordTime: tx.recordTime,
  };
  for (const optional of ["commandId", "workflowId", "traceContext"]) {
    if (tx[optional] !== undefined) tree[optional] = tx[optional];
  }
  return tree;
}

/**
 * JsGetUpdatesResponse -> JsGetUpdateTreesResponse: transactions become trees, topology
 * transactions (which trees never had) become nothing — undefined, so the stream skips them.
 */
export function updateTreesResponse(response: unknown): Json | undefined {
  const update = (response as { update?: Json }).update ?? {};
  const transaction = update.Transaction as { value: unknown } | undefined;
  if (transaction) return { update: { TransactionTree: { value: transactionTree(transaction.value) } } };
  if (update.TopologyTransaction) return undefined;
  return { update };
}
