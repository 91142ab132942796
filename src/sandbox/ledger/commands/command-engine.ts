import {
  type JsonValue,
  type LedgerValue,
  qualifiedName,
  SignatureNotFoundError,
  sameTypeCon,
  type TypeConName,
  typeConKey,
  ValueCodecError,
} from "../../../lf/index.js";
import type { Command__Output, Identifier__Output, Record__Output } from "../../../proto/ledger-api-types.js";
import { errors } from "../../errors.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import type {
  ChoiceModel,
  ContractView,
  InterfaceChoiceModel,
  JsonRecord,
  UpdateContext,
} from "../../models/template-model.js";
import { ledgerValue } from "../../protocol-values.js";
import type { SandboxError } from "../../sandbox-error.js";
import { ledgerErrors } from "../ledger-errors.js";
import type { ExerciseNode, StoredContract, TransactionNode } from "../ledger-records.js";
import { contractKeyHash, newContract } from "./contract-factory.js";
import type { ContractIdAllocator } from "./contract-ids.js";

/** What the engine reads from the committed ledger. */
export interface LedgerLookup {
  /** A contract in any state (undefined when the participant never saw it). */
  contract(contractId: string): StoredContract | undefined;
  /** The active contract with this key hash. */
  activeByKey(keyHash: string): StoredContract | undefined;
}

export interface Submission {
  readonly commands: readonly Command__Output[];
  readonly actAs: readonly string[];
  readonly readAs: readonly string[];
  /** Disclosed contracts by id, already authenticated. */
  readonly disclosed: ReadonlyMap<string, StoredContract>;
  readonly effectiveAt: Date;
}

export interface InterpretedTransaction {
  readonly nodes: readonly TransactionNode[];
  readonly created: readonly StoredContract[];
  /** Consumed contracts with the node that consumed them. */
  readonly archived: ReadonlyMap<StoredContract, number>;
  readonly transient: ReadonlySet<string>;
}

/**
 * Runs the commands of one submission against the native models, all or nothing: it returns
 * the transaction tree or throws the first error (Canton's code and cause); nothing is written
 * to the ledger here. Checks authorization (signatories of creates and controllers of exercises
 * must be among the authorizers: actAs at the root, signatories + controllers inside a choice),
 * visibility (stakeholder among actAs/readAs, disclosed, or created in this transaction), ensure
 * clauses and key uniqueness.
 */
export class CommandEngine {
  constructor(
    private readonly registry: ModelRegistry,
    private readonly contractIds: ContractIdAllocator,
  ) {}

  interpret(submission: Submission, ledger: LedgerLookup): InterpretedTransaction {
    const run = new Interpretation(this.registry, this.contractIds, submission, ledger);
    try {
      for (const command of submission.commands) run.command(command);
    } catch (error) {
      if (error instanceof ValueCodecError || error instanceof SignatureNotFoundError) {
        throw errors.invalidArgument(error.message);
      }
      throw error;
    }
    return run.result();
  }
}

const describe = (id: TypeConName) => typeConKey(id);

class Interpretation {
  private readonly nodes: TransactionNode[] = [];
  private readonly created = new Map<string, StoredContract>();
  private readonly archived = new Map<StoredContract, number>();
  /** Key hash -> contract id created here, or null when the key's contract was archived here. */
  private readonly keys = new Map<string, string | null>();
  private readonly readers: ReadonlySet<string>;
  private readonly actAs: readonly string[];

  constructor(
    private readonly registry: ModelRegistry,
    private readonly contractIds: ContractIdAllocator,
    private readonly submission: Submission,
    private readonly ledger: LedgerLookup,
  ) {
    this.actAs = submission.actAs;
    this.readers = new Set([...submission.actAs, ...submission.readAs]);
  }

  result(): InterpretedTransaction {
    const transient = new Set<string>();
    for (const contract of this.archived.keys()) {
      if (this.created.has(contract.contractId)) transient.add(contract.contractId);
    }
    return { nodes: this.nodes, created: [...this.created.values()], archived: this.archived, transient };
  }

  command(command: Command__Output): void {
    const codec = this.registry.codec;
    switch (command.command) {
      case "create": {
        const c = command.create!;
        const templateId = this.templateIdOf(c.templateId);
        const argument = this.createArgument(templateId, c.createArguments);
        this.create(templateId, argument, this.actAs, []);
        return;
      }
      case "exercise": {
        const c = command.exercise!;
        if (c.contractId === "") throw errors.missingField("contract_id");
        const target = this.visibleContract(c.contractId);
        this.exercise(
          target,
          this.requiredId(c.templateId),
          c.choice,
          ledgerValue(c.choiceArgument),
          this.actAs,
          [],
        );
        return;
      }
      case "exerciseByKey": {
        const c = command.exerciseByKey!;
        const templateId = this.templateIdOf(c.templateId);
        const key = codec
          .contractKey(templateId)
          .toJson(ledgerValue(required(c.contractKey, "contract_key")));
        const target = this.byKey(templateId, key);
        this.exercise(target, templateId, c.choice, ledgerValue(c.choiceArgument), this.actAs, []);
        return;
      }
      case "createAndExercise": {
        const c = command.createAndExercise!;
        const templateId = this.templateIdOf(c.templateId);
        const argument = this.createArgument(templateId, c.createArguments);
        const contractId = this.create(templateId, argument, this.actAs, []);
        this.exercise(
          this.created.get(contractId)!,
          templateId,
          c.choice,
          ledgerValue(c.choiceArgument),
          this.actAs,
          [],
        );
        return;
      }
      default:
        throw errors.missingField("command");
    }
  }

  private createArgument(templateId: TypeConName, record: Record__Output | null): JsonRecord {
    return this.registry.codec.templatePayload(templateId).toJson(ledgerValue({ record })) as JsonRecord;
  }

  private requiredId(id: Identifier__Output | null): TypeConName {
    if (id === null) throw errors.missingField("template_id");
    return this.registry.resolve(id);
  }

  private templateIdOf(id: Parameters<Interpretation["requiredId"]>[0]): TypeConName {
    return this.registry.template(this.requiredId(id)).id;
  }

  /** An active contract, whoever may see it; undefined when unknown or consumed. */
  private active(contractId: string): StoredContract | undefined {
    const contract =
      this.created.get(contractId) ??
      this.ledger.contract(contractId) ??
      this.submission.disclosed.get(contractId);
    if (contract === undefined || this.archived.has(contract)) return undefined;
    // A disclosed contract the ledger has seen archived stays archived.
    return contract.archivedOffset === undefined ? contract : undefined;
  }

  private visibleContract(contractId: string): StoredContract {
    const contract = this.active(contractId);
    if (contract === undefined || !this.visible(contract)) throw ledgerErrors.contractNotFound(contractId);
    return contract;
  }

  private visible(contract: StoredContract): boolean {
    if (this.created.has(contract.contractId) || this.submission.disclosed.has(contract.contractId))
      return true;
    for (const party of contract.stakeholders) if (this.readers.has(party)) return true;
    return false;
  }

  private byKey(templateId: TypeConName, key: JsonValue): StoredContract {
    const hash = contractKeyHash(templateId, key);
    const local = this.keys.get(hash);
    const contract =
      local === null
        ? undefined
        : local !== undefined
          ? this.created.get(local)
          : this.ledger.activeByKey(hash);
    if (contract === undefined || this.archived.has(contract) || !this.visible(contract)) {
      throw ledgerErrors.contractKeyNotFound(describe(templateId), JSON.stringify(key));
    }
    return contract;
  }

  private authorize(nodeId: number, id: TypeConName, required: readonly string[], given: readonly string[]) {
    const missing = required.filter((p) => !given.includes(p));
    if (missing.length > 0) {
      throw ledgerErrors.damlAuthorization(
        `node NodeId(${nodeId}) (${describe(id)}) requires authorizers ${required.join(",")}, but only ${given.join(",")} were given`,
      );
    }
  }

  private create(
    templateId: TypeConName,
    argument: JsonRecord,
    authorizers: readonly string[],
    parentWitnesses: readonly string[],
  ): string {
    const model = this.registry.template(templateId);
    const nodeId = this.nodes.length;
    const contract = newContract(
      this.registry,
      model,
      this.contractIds.next(),
      argument,
      this.submission.effectiveAt,
    );
    this.authorize(nodeId, templateId, contract.signatories, authorizers);
    if (contract.key !== undefined) {
      const { hash, json } = contract.key;
      const local = this.keys.get(hash);
      const taken = local === undefined ? this.ledger.activeByKey(hash) !== undefined : local !== null;
      if (taken) throw ledgerErrors.duplicateContractKey(describe(templateId), JSON.stringify(json));
      this.keys.set(hash, contract.contractId);
    }
    this.created.set(contract.contractId, contract);
    this.nodes.push({
      kind: "create",
      nodeId,
      contract,
      witnesses: union(parentWitnesses, contract.stakeholders),
    });
    return contract.contractId;
  }

  private exercise(
    contract: StoredContract,
    requestedId: TypeConName,
    choiceName: string,
    choiceArgument: LedgerValue | null,
    authorizers: readonly string[],
    parentWitnesses: readonly string[],
  ): JsonValue {
    const codec = this.registry.codec;
    const resolved = this.resolveChoice(contract, requestedId, choiceName);
    const argument = codec
      .choiceArgument(resolved.choiceOwner, choiceName)
      .toJson(required(choiceArgument, "choice_argument")) as JsonRecord;
    const self: ContractView = {
      contractId: contract.contractId,
      templateId: contract.templateId,
      argument: contract.argument,
    };
    const view = resolved.view?.(contract.argument);
    const controllers = [
      ...new Set(
        view !== undefined
          ? (resolved.choice as InterfaceChoiceModel).controllers(view, argument)
          : (resolved.choice as ChoiceModel).controllers(self, argument),
      ),
    ];
    const nodeId = this.nodes.length;
    this.authorize(nodeId, contract.templateId, controllers, authorizers);
    const consuming = resolved.choice.consuming;
    const informees = consuming ? [...contract.stakeholders] : contract.signatories;
    const witnesses = union(union(parentWitnesses, informees), controllers);
    const node: ExerciseNode = {
      kind: "exercise",
      nodeId,
      contract,
      interfaceId: resolved.interfaceId,
      choice: choiceName,
      choiceArgument: codec.choiceArgument(resolved.choiceOwner, choiceName).toValue(argument),
      actingParties: controllers,
      consuming,
      lastDescendantNodeId: nodeId,
      exerciseResult: null,
      witnesses,
    };
    this.nodes.push(node);
    // Daml consumes the contract before the choice body runs.
    if (consuming) {
      this.archived.set(contract, nodeId);
      if (contract.key !== undefined) this.keys.set(contract.key.hash, null);
    }
    const inner = union(contract.signatories, controllers);
    const result =
      view !== undefined
        ? (resolved.choice as InterfaceChoiceModel).body(this.context(inner, witnesses), self, view, argument)
        : (resolved.choice as ChoiceModel).body(this.context(inner, witnesses), self, argument);
    node.exerciseResult = codec.choiceResult(resolved.choiceOwner, choiceName).toValue(result);
    node.lastDescendantNodeId = this.nodes.length - 1;
    return result;
  }

  /** The choice to run: a template choice, or an interface choice (named through the interface or the template). */
  private resolveChoice(contract: StoredContract, requestedId: TypeConName, choiceName: string) {
    const template = this.registry.template(contract.templateId);
    const iface = this.registry.interface(requestedId);
    if (iface !== undefined) {
      const instance = template.implements.find((i) => sameTypeCon(i.interfaceId, iface.id));
      if (instance === undefined) {
        throw ledgerErrors.contractDoesNotImplementInterface(
          contract.contractId,
          describe(contract.templateId),
          describe(iface.id),
        );
      }
      const choice = iface.choices.get(choiceName);
      if (choice === undefined) throw unknownChoice(iface.id, choiceName);
      return { choice, choiceOwner: iface.id, interfaceId: iface.id, view: instance.view };
    }
    if (!sameTypeCon(requestedId, contract.templateId)) {
      throw ledgerErrors.wronglyTypedContract(
        contract.contractId,
        describe(requestedId),
        describe(contract.templateId),
      );
    }
    const choice = template.choices.get(choiceName);
    if (choice !== undefined)
      return { choice, choiceOwner: template.id, interfaceId: undefined, view: undefined };
    for (const instance of template.implements) {
      const inherited = this.registry.interface(instance.interfaceId)?.choices.get(choiceName);
      if (inherited !== undefined) {
        return {
          choice: inherited,
          choiceOwner: instance.interfaceId,
          interfaceId: instance.interfaceId,
          view: instance.view,
        };
      }
    }
    throw unknownChoice(template.id, choiceName);
  }

  private context(authorizers: readonly string[], witnesses: readonly string[]): UpdateContext {
    return {
      create: (templateId, argument) => this.create(templateId, argument, authorizers, witnesses),
      fetch: (contractId, templateId) => {
        const contract = this.active(contractId);
        if (contract === undefined) throw ledgerErrors.contractNotFound(contractId);
        if (!sameTypeCon(contract.templateId, templateId)) {
          throw ledgerErrors.wronglyTypedContract(
            contractId,
            describe(templateId),
            describe(contract.templateId),
          );
        }
        return { contractId, templateId, argument: contract.argument };
      },
      exercise: (contractId, templateId, choice, argument) => {
        const contract = this.active(contractId);
        if (contract === undefined) throw ledgerErrors.contractNotFound(contractId);
        const value = this.registry.codec.choiceArgument(templateId, choice).toValue(argument);
        return this.exercise(contract, templateId, choice, value, authorizers, witnesses);
      },
      assert: (condition, message) => {
        if (!condition) throw ledgerErrors.unhandledException(message);
      },
    };
  }
}

function union(a: readonly string[], b: Iterable<string>): string[] {
  const out = new Set(a);
  for (const p of b) out.add(p);
  return [...out];
}

function required<T>(value: T | null | undefined, field: string): T {
  if (value === null || value === undefined) throw errors.missingField(field);
  return value;
}

function unknownChoice(id: TypeConName, choice: string): SandboxError {
  return errors.invalidArgument(`Couldn't find requested choice ${choice} for template ${qualifiedName(id)}`);
}
