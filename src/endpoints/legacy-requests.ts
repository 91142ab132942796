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

/** GetUpdatesRequest in either form -> the 3.5 form (`updateFormat`). */
export function updatesRequest(json: unknown, forTrees: boolean): Json {
  const { filter, verbose, updateFormat, ...rest } = json as Json;
  if (updateFormat !== undefined && filter !== undefined) {
    throw invalidArgumentError(
      "Both update_format and filter are set. Please use either backwards compatible arguments (filter and verbose) or update_format, but not both.",
    );
  }
  if (updateFormat !== undefined && verbose === true) {
    throw invalidArgumentError(
      "Both update_format and verbose are set. Please use either backwards compatible arguments (filter and verbose) or update_format, but not both.",
    );
  }
  if (updateFormat !== undefined) return { ...rest, updateFormat };
  if (filter === undefined) {
    throw invalidArgumentError(
      "Either filter/verbose or update_format is required. Please use either backwards compatible arguments (filter and verbose) or update_format.",
    );
  }
  const eventFormat = eventFormatOf(filter as TransactionFilter, verbose === true, forTrees);
  return {
    ...rest,
    updateFormat: {
      includeTransactions: { eventFormat, transactionShape: forTrees ? LEDGER_EFFECTS : ACS_DELTA },
      includeReassignments: eventFormat,
    },
  };
}

/** GetActiveContractsRequest in either form -> the 3.5 form (`eventFormat`). */
export function activeContractsRequest(json: unknown): Json {
  const { filter, verbose, eventFormat, ...rest } = json as Json;
  if (eventFormat !== undefined && filter !== undefined) {
    throw invalidArgumentError(
      "Both event_format and filter are set. Please use either backwards compatible arguments (filter and verbose) or event_format, but not both.",
    );
  }
  if (eventFormat !== undefined && verbose === true) {
    throw invalidArgumentError(
      "Both event_format and verbose are set. Please use either backwards compatible arguments (filter and verbose) or event_format, but not both.",
    );
  }
  if (eventFormat !== undefined) return { ...rest, eventFormat };
  if (filter === undefined) {
    throw invalidArgumentError(
      "Either filter/verbose or event_format is required. Please use either backwards compatible arguments (filter and verbose) or event_format.",
    );
  }
  const legacy = filter as TransactionFilter;
  const format: Json = { filtersByParty: legacy.filtersByParty ?? {}, verbose: verbose === true };
  if (legacy.filtersForAnyParty) format.filtersForAnyParty = legacy.filtersForAnyParty;
  return { ...rest, eventFormat: format };
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
