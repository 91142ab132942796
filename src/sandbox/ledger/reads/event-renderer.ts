import { type LedgerValue, typeConKey } from "../../../lf/index.js";
import type { Record as RecordMessage } from "../../../proto/ledger-api-types.js";
import { identifier, OK_STATUS, timestamp, valueMessage } from "../../protocol-values.js";
import type { ExerciseNode, StoredContract } from "../ledger-records.js";
import type { ParticipantLedger } from "../participant-ledger.js";
import type { EventSelection } from "./event-format.js";
import { withoutLabels } from "./value-labels.js";

const EMPTY = Buffer.alloc(0);

/** Where an event sits and what the request asked of it. */
export interface EventPlacement {
  readonly offset: number;
  readonly nodeId: number;
  readonly selection: EventSelection;
  readonly verbose: boolean;
  readonly acsDelta: boolean;
}

/**
 * Builds the Ledger API events (CreatedEvent, ArchivedEvent, ExercisedEvent) in the
 * proto-loader shape from the ledger's records. Values come labelled (verbose) or not; interface
 * views are computed by the native model once per contract and interface.
 */
export class EventRenderer {
  private readonly views = new WeakMap<StoredContract, Map<string, LedgerValue>>();

  constructor(private readonly ledger: ParticipantLedger) {}

  private value(value: LedgerValue, verbose: boolean) {
    const message = valueMessage(value);
    return verbose ? message : withoutLabels(message);
  }

  private record(
    value: LedgerValue,
    verbose: boolean,
    recordId: StoredContract["templateId"] | null,
  ): RecordMessage {
    const fields = this.value(value, verbose).record?.fields ?? [];
    return { recordId: verbose && recordId !== null ? identifier(recordId) : null, fields };
  }

  created(contract: StoredContract, placement: EventPlacement) {
    const { selection, verbose } = placement;
    return {
      offset: placement.offset,
      nodeId: placement.nodeId,
      contractId: contract.contractId,
      templateId: identifier(contract.templateId),
      contractKey: contract.key === undefined ? null : this.value(contract.key.value, verbose),
      contractKeyHash: contract.key === undefined ? EMPTY : Buffer.from(contract.key.hash, "hex"),
      createArguments: this.record(contract.argumentValue, verbose, contract.templateId),
      createdEventBlob: selection.includeBlob ? this.ledger.createdEventBlob(contract) : EMPTY,
      interfaceViews: selection.interfaces
        .filter((i) => i.includeView)
        .map((i) => ({
          interfaceId: identifier(i.interfaceId),
          viewStatus: OK_STATUS,
          viewValue: this.record(this.view(contract, i.interfaceId), verbose, null),
          implementationPackageId: contract.templateId.packageId,
        })),
      witnessParties: selection.witnesses,
      signatories: contract.signatories,
      observers: contract.observers,
      createdAt: timestamp(contract.createdAt),
      packageName: contract.packageName,
      acsDelta: placement.acsDelta,
      representativePackageId: contract.templateId.packageId,
    };
  }

  archived(contract: StoredContract, placement: Omit<EventPlacement, "acsDelta" | "verbose">) {
    return {
      offset: placement.offset,
      nodeId: placement.nodeId,
      contractId: contract.contractId,
      templateId: identifier(contract.templateId),
      witnessParties: placement.selection.witnesses,
      packageName: contract.packageName,
      implementedInterfaces: placement.selection.interfaces.map((i) => identifier(i.interfaceId)),
    };
  }

  exercised(node: ExerciseNode, placement: EventPlacement) {
    const { verbose } = placement;
    return {
      offset: placement.offset,
      nodeId: placement.nodeId,
      contractId: node.contract.contractId,
      templateId: identifier(node.contract.templateId),
      interfaceId: node.interfaceId === undefined ? null : identifier(node.interfaceId),
      choice: node.choice,
      choiceArgument: this.value(node.choiceArgument, verbose),
      actingParties: node.actingParties,
      consuming: node.consuming,
      witnessParties: placement.selection.witnesses,
      lastDescendantNodeId: node.lastDescendantNodeId,
      exerciseResult: node.exerciseResult === null ? null : this.value(node.exerciseResult, verbose),
      packageName: node.contract.packageName,
      implementedInterfaces: node.consuming
        ? placement.selection.interfaces.map((i) => identifier(i.interfaceId))
        : [],
      acsDelta: placement.acsDelta,
    };
  }

  private view(contract: StoredContract, interfaceId: StoredContract["templateId"]): LedgerValue {
    let byInterface = this.views.get(contract);
    if (byInterface === undefined) {
      byInterface = new Map();
      this.views.set(contract, byInterface);
    }
    const key = typeConKey(interfaceId);
    let view = byInterface.get(key);
    if (view === undefined) {
      const registry = this.ledger.registry;
      const instance = registry
        .template(contract.templateId)
        .implements.find((i) => typeConKey(i.interfaceId) === key)!;
      view = registry.codec.interfaceView(interfaceId).toValue(instance.view(contract.argument));
      byInterface.set(key, view);
    }
    return view;
  }
}
