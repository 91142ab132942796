import { PackageSignatureIndex, type TypeConName, typeConKey, ValueCodec } from "../../lf/index.js";
import type { Identifier__Output } from "../../proto/ledger-api-types.js";
import { errors } from "../errors.js";
import { SAMPLE_PACKAGE_ID, SAMPLE_PACKAGE_NAME, samplePackageSignature } from "../sample-package/index.js";
import { accountModel } from "./account.js";
import { allTypesModel } from "./all-types.js";
import { assetModel, iouModel } from "./iou.js";
import type { InterfaceModel, TemplateModel } from "./template-model.js";
import { tickModel } from "./tick.js";

/**
 * The native models the ledger can run, keyed by package id + module + entity, with the value
 * codec over their signatures. Templates of other packages (an uploaded DAR) are known by name
 * only: a command on them fails with a FAILED_PRECONDITION error that says why.
 */
export class ModelRegistry {
  readonly codec: ValueCodec;
  private readonly templates = new Map<string, TemplateModel>();
  private readonly interfaces = new Map<string, InterfaceModel>();
  /** package name -> package id of the version commands resolve `#name` to. */
  private readonly packageIdsByName = new Map<string, string>([[SAMPLE_PACKAGE_NAME, SAMPLE_PACKAGE_ID]]);
  private readonly packageNamesById = new Map<string, string>([[SAMPLE_PACKAGE_ID, SAMPLE_PACKAGE_NAME]]);

  constructor() {
    this.codec = new ValueCodec(new PackageSignatureIndex([samplePackageSignature]));
    for (const model of [iouModel, accountModel, allTypesModel, tickModel]) {
      this.templates.set(typeConKey(model.id), model);
    }
    this.interfaces.set(typeConKey(assetModel.id), assetModel);
  }

  packageName(packageId: string): string {
    return this.packageNamesById.get(packageId) ?? "";
  }

  /**
   * Replaces `#package-name` (as commands and filters may name a package) by the package id it
   * stands for; package ids pass unchanged.
   */
  resolve(id: Identifier__Output): TypeConName {
    if (!id.packageId.startsWith("#")) return { ...id };
    const name = id.packageId.slice(1);
    const packageId = this.packageIdsByName.get(name);
    if (packageId === undefined)
      throw errors.noNativeModel(`${id.packageId}:${id.moduleName}:${id.entityName}`);
    return { packageId, moduleName: id.moduleName, entityName: id.entityName };
  }

  template(id: Identifier__Output): TemplateModel {
    const resolved = this.resolve(id);
    const model = this.templates.get(typeConKey(resolved));
    if (model === undefined) throw errors.noNativeModel(typeConKey(resolved));
    return model;
  }

  interface(id: Identifier__Output): InterfaceModel | undefined {
    return this.interfaces.get(typeConKey(this.resolve(id)));
  }

  /** Whether `id` names a template or interface the ledger knows (for event filters). */
  knows(id: TypeConName): "template" | "interface" | undefined {
    const key = typeConKey(id);
    if (this.templates.has(key)) return "template";
    if (this.interfaces.has(key)) return "interface";
    return undefined;
  }
}
