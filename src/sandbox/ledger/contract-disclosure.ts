import { sameTypeCon, typeConKey } from "../../lf/index.js";
import type { DisclosedContract__Output } from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import type { ModelRegistry } from "../models/model-registry.js";
import { type BlobContents, ContractBlobCodec } from "./commands/contract-blob.js";
import { contractKeyOf } from "./commands/contract-factory.js";
import { ledgerErrors } from "./ledger-errors.js";
import type { LedgerIndex } from "./ledger-index.js";
import type { StoredContract } from "./ledger-records.js";

/**
 * Both directions of explicit disclosure: the created event blob this participant hands out
 * for a contract, and the contracts a submission brings along as blobs, authenticated before
 * the command engine may use them.
 */
export class ContractDisclosure {
  private readonly codec: ContractBlobCodec;
  // Encoding costs an HMAC and a JSON rendering of the argument; a contract never changes.
  private readonly blobs = new WeakMap<StoredContract, Buffer>();

  constructor(
    blobSecret: Buffer,
    private readonly registry: ModelRegistry,
    private readonly index: LedgerIndex,
  ) {
    this.codec = new ContractBlobCodec(blobSecret);
  }

  createdEventBlob(contract: StoredContract): Buffer {
    let blob = this.blobs.get(contract);
    if (blob === undefined) {
      blob = this.codec.encode({
        templateId: contract.templateId,
        contractId: contract.contractId,
        packageName: contract.packageName,
        argument: contract.argument,
        signatories: contract.signatories,
        observers: contract.observers,
        key: contract.key?.json,
        createdAt: contract.createdAt.toISOString(),
      });
      this.blobs.set(contract, blob);
    }
    return blob;
  }

  /** Authenticates the disclosed contracts of a submission and checks the ids given beside them. */
  disclosedContracts(disclosures: readonly DisclosedContract__Output[]): ReadonlyMap<string, StoredContract> {
    const disclosed = new Map<string, StoredContract>();
    for (const given of disclosures) {
      if (given.createdEventBlob.length === 0)
        throw errors.missingField("disclosed_contracts.created_event_blob");
      const contents = this.codec.decode(given.createdEventBlob);
      if (typeof contents === "string") throw ledgerErrors.disclosedContractAuthentication(contents);
      if (given.contractId !== "" && given.contractId !== contents.contractId) {
        throw ledgerErrors.disclosedContractAuthentication(
          `the contract id ${given.contractId} does not match the blob's ${contents.contractId}`,
        );
      }
      const templateId = given.templateId && this.registry.resolve(given.templateId);
      if (templateId && !sameTypeCon(templateId, contents.templateId)) {
        throw ledgerErrors.disclosedContractAuthentication(
          `the template id ${typeConKey(templateId)} does not match the blob's ${typeConKey(contents.templateId)}`,
        );
      }
      disclosed.set(contents.contractId, this.index.contract(contents.contractId) ?? this.fromBlob(contents));
    }
    return disclosed;
  }

  /** A contract known only from its blob (created on another participant). */
  private fromBlob(contents: BlobContents): StoredContract {
    const { registry } = this;
    const key =
      contents.key === undefined
        ? undefined
        : contractKeyOf(
            registry,
            contents.templateId,
            contents.key,
            registry.template(contents.templateId).key?.maintainers(contents.key) ?? [],
          );
    return {
      contractId: contents.contractId,
      templateId: contents.templateId,
      packageName: contents.packageName,
      argument: contents.argument,
      argumentValue: registry.codec.templatePayload(contents.templateId).toValue(contents.argument),
      signatories: contents.signatories,
      observers: contents.observers,
      stakeholders: new Set([...contents.signatories, ...contents.observers]),
      key,
      createdAt: new Date(contents.createdAt),
      createdOffset: 0,
      createdNodeId: 0,
      createdWorkflowId: "",
      sequence: -1,
      archivedOffset: undefined,
      archivedNodeId: undefined,
      synchronizerId: "",
      reassignments: [],
    };
  }
}
