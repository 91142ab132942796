import type {
  TopologyTransaction,
  TransactionFormat__Output,
  UpdateFormat__Output,
} from "../../../proto/ledger-api-types.js";
import type { Requirement } from "../../auth/authorization.js";
import { errors } from "../../errors.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import { timestamp } from "../../protocol-values.js";
import type { TopologyUpdate } from "../sandbox-store.js";
import { CompiledEventFormat } from "./event-format.js";
import type { TransactionFormat } from "./transaction-projection.js";

/** What an UpdateFormat asks for; unset parts emit nothing. */
export interface CompiledUpdateFormat {
  readonly transactions: TransactionFormat | undefined;
  /** The reassignments' event format (their events are shown to stakeholders it selects). */
  readonly reassignments: CompiledEventFormat | undefined;
  /** Parties whose participant authorization events to show; empty = all. */
  readonly topologyParties: ReadonlySet<string> | undefined;
  readonly key: string;
  /** The rights a reader needs for every part. */
  readonly requirements: readonly Requirement[];
}

export function compileTransactionFormat(
  registry: ModelRegistry,
  message: TransactionFormat__Output | null,
  field: string,
): TransactionFormat {
  if (message === null) throw errors.missingField(field);
  const events = CompiledEventFormat.compile(registry, message.eventFormat, "event_format");
  switch (message.transactionShape) {
    case "TRANSACTION_SHAPE_ACS_DELTA":
      return { shape: "ACS_DELTA", events };
    case "TRANSACTION_SHAPE_LEDGER_EFFECTS":
      return { shape: "LEDGER_EFFECTS", events };
    default:
      throw errors.missingField("transaction_shape");
  }
}

export function compileUpdateFormat(
  registry: ModelRegistry,
  message: UpdateFormat__Output | null,
): CompiledUpdateFormat {
  if (message === null) throw errors.missingField("update_format");
  const transactions =
    message.includeTransactions === null
      ? undefined
      : compileTransactionFormat(registry, message.includeTransactions, "include_transactions");
  const reassignments =
    message.includeReassignments === null
      ? undefined
      : CompiledEventFormat.compile(registry, message.includeReassignments, "include_reassignments");
  const topology = message.includeTopologyEvents?.includeParticipantAuthorizationEvents ?? null;
  const topologyParties = topology === null ? undefined : new Set(topology.parties);
  const requirements: Requirement[] = [];
  if (transactions !== undefined) requirements.push(transactions.events.requirement());
  if (reassignments !== undefined) requirements.push(reassignments.requirement());
  if (topologyParties !== undefined) {
    requirements.push(
      topologyParties.size === 0
        ? { kind: "read-as-any-party" }
        : { kind: "read-as", parties: [...topologyParties] },
    );
  }
  return {
    transactions,
    reassignments,
    topologyParties,
    requirements,
    key: JSON.stringify([
      transactions?.shape,
      transactions?.events.key,
      reassignments?.key,
      topologyParties && [...topologyParties].sort(),
    ]),
  };
}

const TOPOLOGY_EVENT_FIELDS = {
  added: "participantAuthorizationAdded",
  changed: "participantAuthorizationChanged",
  onboarding: "participantAuthorizationOnboarding",
} as const;

/** A topology transaction's events for these parties, or undefined when none is asked for. */
export function projectTopology(
  update: TopologyUpdate,
  parties: ReadonlySet<string>,
): TopologyTransaction | undefined {
  const events = update.events
    .filter((e) => parties.size === 0 || parties.has(e.partyId))
    .map((e) => {
      const subject = { partyId: e.partyId, participantId: e.participantId };
      if (e.kind === "revoked") return { participantAuthorizationRevoked: subject };
      return { [TOPOLOGY_EVENT_FIELDS[e.kind]]: { ...subject, participantPermission: e.permission } };
    });
  if (events.length === 0) return undefined;
  return {
    updateId: update.updateId,
    offset: update.offset,
    synchronizerId: update.synchronizerId,
    recordTime: timestamp(update.recordTime),
    events,
    traceContext: null,
  };
}
