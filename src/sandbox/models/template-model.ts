/**
 * What a native model of a Daml template or interface is: the parts of a template's semantics
 * the ledger needs (signatories, observers, ensure, key, choices and their bodies), written in
 * TypeScript over typed JSON (the JSON API encoding the value codec produces), so that models read
 * like the Daml they stand for.
 */
import type { JsonValue, TypeConName } from "../../lf/index.js";

/** A record argument in typed JSON: field name -> value. */
export type JsonRecord = { readonly [field: string]: JsonValue };

/** A contract as a choice body sees it. */
export interface ContractView {
  readonly contractId: string;
  readonly templateId: TypeConName;
  readonly argument: JsonRecord;
}

/** What a choice body may do on the ledger; every effect becomes a node under the exercise. */
export interface UpdateContext {
  create(templateId: TypeConName, argument: JsonRecord): string;
  /** Fetches a contract the submitters can see (CONTRACT_NOT_FOUND otherwise). */
  fetch(contractId: string, templateId: TypeConName): ContractView;
  exercise(contractId: string, templateId: TypeConName, choice: string, argument: JsonRecord): JsonValue;
  /** Daml's `assertMsg`: an unhandled AssertionFailed exception aborts the transaction. */
  assert(condition: boolean, message: string): void;
}

export interface ChoiceModel {
  readonly name: string;
  readonly consuming: boolean;
  controllers(contract: ContractView, argument: JsonRecord): readonly string[];
  /** The choice body; returns the result in typed JSON. */
  body(ctx: UpdateContext, contract: ContractView, argument: JsonRecord): JsonValue;
}

interface ContractKeyModel {
  /** The key value in typed JSON. */
  key(argument: JsonRecord): JsonValue;
  maintainers(key: JsonValue): readonly string[];
}

export interface TemplateModel {
  readonly id: TypeConName;
  signatories(argument: JsonRecord): readonly string[];
  /** Observers as Daml defines them; the ledger removes signatories from the list it shows. */
  observers(argument: JsonRecord): readonly string[];
  /** The ensure clause: undefined when it holds, else the failing predicate in words. */
  ensure(argument: JsonRecord): string | undefined;
  readonly key?: ContractKeyModel;
  readonly choices: ReadonlyMap<string, ChoiceModel>;
  /** Interfaces this template implements, with the view it computes for each. */
  readonly implements: readonly InterfaceInstance[];
}

interface InterfaceInstance {
  readonly interfaceId: TypeConName;
  view(argument: JsonRecord): JsonRecord;
}

export interface InterfaceModel {
  readonly id: TypeConName;
  /** Interface choices see the contract through its view (controllers come from the view). */
  readonly choices: ReadonlyMap<string, InterfaceChoiceModel>;
}

export interface InterfaceChoiceModel {
  readonly name: string;
  readonly consuming: boolean;
  controllers(view: JsonRecord, argument: JsonRecord): readonly string[];
  body(ctx: UpdateContext, contract: ContractView, view: JsonRecord, argument: JsonRecord): JsonValue;
}

export const choiceMap = <C extends { readonly name: string }>(...choices: C[]): ReadonlyMap<string, C> =>
  new Map(choices.map((c) => [c.name, c]));

/** Every template's `Archive`: consuming, controlled by the signatories, returns Unit. */
export function archiveChoice(signatories: (argument: JsonRecord) => readonly string[]): ChoiceModel {
  return {
    name: "Archive",
    consuming: true,
    controllers: (contract) => signatories(contract.argument),
    body: () => ({}),
  };
}

export const party = (record: JsonRecord, field: string): string => record[field] as string;
export const text = (record: JsonRecord, field: string): string => record[field] as string;
export const parties = (record: JsonRecord, field: string): readonly string[] =>
  (record[field] as string[] | undefined) ?? [];
