import { createHash } from "node:crypto";
import { type JsonValue, type TypeConName, typeConKey } from "../../../lf/index.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import type { JsonRecord, TemplateModel } from "../../models/template-model.js";
import { ledgerErrors } from "../ledger-errors.js";
import type { ContractKey, StoredContract } from "../ledger-records.js";

const unique = (parties: readonly string[]): string[] => [...new Set(parties)];

/** The hash that identifies a contract key among all templates. */
export function contractKeyHash(templateId: TypeConName, key: JsonValue): string {
  return createHash("sha256")
    .update(`${typeConKey(templateId)}|${JSON.stringify(key)}`)
    .digest("hex");
}

/** A contract's key in the three forms the ledger needs: JSON, Ledger API value and hash. */
export function contractKeyOf(
  registry: ModelRegistry,
  templateId: TypeConName,
  json: JsonValue,
  maintainers: readonly string[],
): ContractKey {
  return {
    json,
    value: registry.codec.contractKey(templateId).toValue(json),
    hash: contractKeyHash(templateId, json),
    maintainers,
  };
}

/**
 * A new contract of `model` with the metadata its model computes (signatories, observers, key),
 * after its ensure clause held. Offsets are filled in when the transaction commits.
 */
export function newContract(
  registry: ModelRegistry,
  model: TemplateModel,
  contractId: string,
  argument: JsonRecord,
  createdAt: Date,
): StoredContract {
  const templateId = model.id;
  const failed = model.ensure(argument);
  if (failed !== undefined) throw ledgerErrors.templatePrecondition(typeConKey(templateId), failed);
  const signatories = unique(model.signatories(argument));
  const observers = unique(model.observers(argument)).filter((p) => !signatories.includes(p));
  let key: ContractKey | undefined;
  if (model.key !== undefined) {
    const json = model.key.key(argument);
    key = contractKeyOf(registry, templateId, json, unique(model.key.maintainers(json)));
  }
  return {
    contractId,
    templateId,
    packageName: registry.packageName(templateId.packageId),
    argument,
    argumentValue: registry.codec.templatePayload(templateId).toValue(argument),
    signatories,
    observers,
    stakeholders: new Set([...signatories, ...observers]),
    key,
    createdAt,
    ...NOT_YET_COMMITTED,
    synchronizerId: "",
    reassignments: [],
  };
}

/** What a contract's commit fills in (LedgerIndex.applyTransaction); spread into a new contract. */
export const NOT_YET_COMMITTED = {
  createdOffset: 0,
  createdNodeId: 0,
  createdWorkflowId: "",
  sequence: 0,
  archivedOffset: undefined,
  archivedNodeId: undefined,
} as const satisfies Partial<StoredContract>;
