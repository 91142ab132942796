/**
 * Writes a package definition (type signatures only) as a real Daml-LF 2 archive.
 *
 * The sandbox implements its templates natively, so the archive only has to carry what a
 * real decoder reads and checks: interned strings, names and types, module flags, one
 * record per template, and expression bodies that are well-typed but never evaluated.
 * Signatories and controllers project the template's first Party field (as Daml code would
 * for the common case); every other body is `ERROR @τ "..."`, a placeholder of any type τ.
 */
import { sha256Hex } from "./archive-decode.js";
import { archiveSchema } from "./archive-proto.js";
import { LfEncodeError } from "./errors.js";
import {
  BUILTIN,
  BUILTIN_CON_UNIT,
  BUILTIN_FUNCTION_ERROR,
  type WDefDataType,
  type WDefInterface,
  type WDefTemplate,
  type WExpr,
  type WKind,
  type WModule,
  type WPackageRef,
  type WTemplateChoice,
  type WType,
  type WTypeCon,
  type WTypeConId,
} from "./lf2-wire.js";
import {
  type ChoiceSignature,
  type DataTypeSignature,
  type InterfaceSignature,
  type LfType,
  type LfVersion,
  type ModuleSignature,
  type PackageDefinition,
  SELF_PACKAGE_ID,
  type TemplateSignature,
  type TypeConName,
} from "./signature-model.js";

export interface EncodeOptions {
  /** Default 2.3 (the lowest version with contract keys; 2.1 and 2.2 reject keys). */
  readonly lfVersion?: LfVersion;
}

export interface EncodedPackage {
  readonly packageId: string;
  /** The serialized Archive: the content of a .dalf file. */
  readonly dalf: Uint8Array;
  readonly lfVersion: LfVersion;
}

const VERSION_TO_MINOR: Readonly<Record<LfVersion, string>> = {
  "2.1": "1",
  "2.2": "2",
  "2.3": "3",
  "2.dev": "dev",
};

const STAR: WKind = { star: {} };
const NAT: WKind = { nat: {} };
const STUB_MESSAGE = "implemented natively by the ledger-json-gateway sandbox";

class PackageWriter {
  private readonly strings: string[] = [];
  private readonly stringIndex = new Map<string, number>();
  private readonly dottedNames: { segmentsInternedStr: number[] }[] = [];
  private readonly dottedIndex = new Map<string, number>();
  private readonly types: WType[] = [];
  private readonly typeIndex = new Map<string, number>();
  private readonly imports: string[] = [];
  /** LF 2.2 spells application as curried TApp and lists the packages it refers to. */
  private readonly flat: boolean;

  constructor(
    private readonly def: PackageDefinition,
    private readonly lfVersion: LfVersion,
  ) {
    this.flat = lfVersion !== "2.1";
  }

  str(s: string): number {
    let i = this.stringIndex.get(s);
    if (i === undefined) {
      i = this.strings.push(s) - 1;
      this.stringIndex.set(s, i);
    }
    return i;
  }

  dname(dotted: string): number {
    let i = this.dottedIndex.get(dotted);
    if (i === undefined) {
      const segmentsInternedStr = dotted.split(".").map((seg) => this.str(seg));
      i = this.dottedNames.push({ segmentsInternedStr }) - 1;
      this.dottedIndex.set(dotted, i);
    }
    return i;
  }

  private packageRef(packageId: string): WPackageRef {
    if (packageId === SELF_PACKAGE_ID) return { selfPackageId: {} };
    if (!this.flat) return { importedPackageIdInternedStr: this.str(packageId) };
    let i = this.imports.indexOf(packageId);
    if (i < 0) i = this.imports.push(packageId) - 1;
    return { packageImportId: i };
  }

  tyconId(id: TypeConName): WTypeConId {
    return {
      module: {
        packageId: this.packageRef(id.packageId),
        moduleNameInternedDname: this.dname(id.moduleName),
      },
      nameInternedDname: this.dname(id.entityName),
    };
  }

  /** Hash-conses a table entry whose children are already interned references. */
  private internEntry(entry: WType): WType {
    const key = JSON.stringify(entry);
    let i = this.typeIndex.get(key);
    if (i === undefined) {
      i = this.types.push(entry) - 1;
      this.typeIndex.set(key, i);
    }
    return { internedType: i };
  }

  /** Applies a head to arguments in the version's spelling (inline args or nested TApp). */
  private applied(head: "builtin" | "con" | "var", payload: WType, args: readonly LfType[]): WType {
    const refs = args.map((a) => this.type(a));
    if (!this.flat) {
      const inner = payload[head] as object;
      return this.internEntry({ [head]: { ...inner, args: refs } } as WType);
    }
    let acc = this.internEntry(payload);
    for (const rhs of refs) acc = this.internEntry({ tapp: { lhs: acc, rhs } });
    return acc;
  }

  /** Any type, as an `interned` reference (the only form LF 2 allows outside the table). */
  type(t: LfType): WType {
    switch (t.kind) {
      case "var":
        return this.internEntry({ var: { varInternedStr: this.str(t.name), args: [] } });
      case "nat":
        return this.internEntry({ nat: t.value });
      case "con":
        return this.applied("con", { con: { tycon: this.tyconId(t.tycon), args: [] } }, t.args);
      case "unserializable":
        throw new LfEncodeError(`cannot encode ${t.description}: only serializable types can be written`);
      case "builtin":
        break;
    }
    const b = (code: number, ...args: LfType[]) =>
      this.applied("builtin", { builtin: { builtin: code, args: [] } }, args);
    switch (t.name) {
      case "unit":
        return b(BUILTIN.UNIT);
      case "bool":
        return b(BUILTIN.BOOL);
      case "int64":
        return b(BUILTIN.INT64);
      case "text":
        return b(BUILTIN.TEXT);
      case "party":
        return b(BUILTIN.PARTY);
      case "date":
        return b(BUILTIN.DATE);
      case "timestamp":
        return b(BUILTIN.TIMESTAMP);
      case "numeric":
        return b(BUILTIN.NUMERIC, typeof t.scale === "number" ? { kind: "nat", value: t.scale } : t.scale);
      case "contractId":
        return b(BUILTIN.CONTRACT_ID, t.template);
      case "optional":
        return b(BUILTIN.OPTIONAL, t.elem);
      case "list":
        return b(BUILTIN.LIST, t.elem);
      case "textMap":
        return b(BUILTIN.TEXTMAP, t.value);
      case "genMap":
        return b(BUILTIN.GENMAP, t.key, t.value);
    }
  }

  // ------------------------------------------------------------ expressions

  /** `ERROR @τ "..."`: well-typed at any τ, never evaluated by anyone. */
  private stub(type: LfType): WExpr {
    return {
      app: {
        fun: { tyApp: { expr: { builtin: BUILTIN_FUNCTION_ERROR }, types: [this.type(type)] } },
        args: [{ builtinLit: { textInternedStr: this.str(STUB_MESSAGE) } }],
      },
    };
  }

  /** `[this.<first Party field>]`, or `[]` when the template has no Party field. */
  private partiesOf(templateCon: WTypeCon, record: DataTypeSignature): WExpr {
    const party = this.type({ kind: "builtin", name: "party" });
    const fields = record.body.kind === "record" ? record.body.fields : [];
    const first = fields.find((f) => f.type.kind === "builtin" && f.type.name === "party");
    if (!first) return { nil: { type: party } };
    return {
      cons: {
        type: party,
        front: [
          {
            recProj: {
              tycon: templateCon,
              fieldInternedStr: this.str(first.name),
              record: { varInternedStr: this.str("this") },
            },
          },
        ],
        tail: { nil: { type: party } },
      },
    };
  }

  private choice(c: ChoiceSignature, controllers: WExpr): WTemplateChoice {
    const unit = c.returnType.kind === "builtin" && c.returnType.name === "unit";
    return {
      nameInternedStr: this.str(c.name),
      consuming: c.consuming,
      controllers,
      observers: { nil: { type: this.type({ kind: "builtin", name: "party" }) } },
      argBinder: { varInternedStr: this.str("arg"), type: this.type(c.argType) },
      retType: this.type(c.returnType),
      update: {
        update: {
          pure: {
            type: this.type(c.returnType),
            expr: unit ? { builtinCon: BUILTIN_CON_UNIT } : this.stub(c.returnType),
          },
        },
      },
      selfBinderInternedStr: this.str("self"),
    };
  }

  // ------------------------------------------------------------ definitions

  private dataType(d: DataTypeSignature): WDefDataType {
    const natParams = new Set<string>();
    const visit = (t: LfType): void => {
      if (t.kind === "con") t.args.forEach(visit);
      if (t.kind !== "builtin") return;
      if (t.name === "numeric" && typeof t.scale !== "number") natParams.add(t.scale.name);
      if (t.name === "contractId") visit(t.template);
      if (t.name === "optional" || t.name === "list") visit(t.elem);
      if (t.name === "genMap") visit(t.key);
      if (t.name === "textMap" || t.name === "genMap") visit(t.value);
    };
    const fields = (list: readonly { name: string; type: LfType }[]) =>
      list.map((f) => {
        visit(f.type);
        return { fieldInternedStr: this.str(f.name), type: this.type(f.type) };
      });
    const base = { nameInternedDname: this.dname(d.name), serializable: d.serializable };
    let cons: Partial<WDefDataType>;
    switch (d.body.kind) {
      case "record":
        cons = { record: { fields: fields(d.body.fields) } };
        break;
      case "variant":
        cons = { variant: { fields: fields(d.body.constructors) } };
        break;
      case "enum":
        if (d.params.length > 0) throw new LfEncodeError(`enum ${d.name} cannot have type parameters`);
        cons = { enum: { constructorsInternedStr: d.body.constructors.map((c) => this.str(c)) } };
        break;
      case "interface":
        cons = { interface: {} };
        break;
    }
    const params = d.params.map((p) => ({
      varInternedStr: this.str(p),
      kind: natParams.has(p) ? NAT : STAR,
    }));
    return { ...base, params, ...cons };
  }

  private template(m: ModuleSignature, tpl: TemplateSignature): WDefTemplate {
    const record = m.dataTypes.find((d) => d.name === tpl.name);
    if (record?.body.kind !== "record" || record.params.length > 0) {
      throw new LfEncodeError(
        `template ${m.name}:${tpl.name} needs a record data type of the same name without type parameters`,
      );
    }
    const self: TypeConName = { packageId: SELF_PACKAGE_ID, moduleName: m.name, entityName: tpl.name };
    const templateCon: WTypeCon = { tycon: this.tyconId(self), args: [] };
    const parties = this.partiesOf(templateCon, record);
    const out: WDefTemplate = {
      tyconInternedDname: this.dname(tpl.name),
      paramInternedStr: this.str("this"),
      signatories: parties,
      choices: tpl.choices.map((c) => this.choice(c, parties)),
      observers: { nil: { type: this.type({ kind: "builtin", name: "party" }) } },
      implements: tpl.implements.map((iface) => ({
        interface: this.tyconId(iface),
        body: { methods: [], view: this.stub(this.viewOf(iface)) },
      })),
    };
    if (tpl.key === undefined) return out;
    if (this.lfVersion === "2.1" || this.lfVersion === "2.2") {
      throw new LfEncodeError(
        `template ${m.name}:${tpl.name} has a contract key, which needs Daml-LF 2.3 or later (asked for ${this.lfVersion})`,
      );
    }
    const partyList: LfType = { kind: "builtin", name: "list", elem: { kind: "builtin", name: "party" } };
    return {
      ...out,
      key: {
        type: this.type(tpl.key),
        keyExpr: this.stub(tpl.key),
        maintainers: {
          abs: {
            param: [{ varInternedStr: this.str("key"), type: this.type(tpl.key) }],
            body: this.stub(partyList),
          },
        },
      },
    };
  }

  /** The view type of an interface of this package (needed to type the instance's view). */
  private viewOf(iface: TypeConName): LfType {
    if (iface.packageId === SELF_PACKAGE_ID) {
      const mod = this.def.modules.find((m) => m.name === iface.moduleName);
      const found = mod?.interfaces.find((i) => i.name === iface.entityName);
      if (found) return found.view;
    }
    throw new LfEncodeError(
      `template implements ${iface.moduleName}:${iface.entityName}, which is not an interface of this package`,
    );
  }

  private iface(m: ModuleSignature, i: InterfaceSignature): WDefInterface {
    const marker = m.dataTypes.find((d) => d.name === i.name);
    if (marker?.body.kind !== "interface") {
      throw new LfEncodeError(
        `interface ${m.name}:${i.name} needs a data type of the same name with an interface body`,
      );
    }
    const controllers = this.stub({
      kind: "builtin",
      name: "list",
      elem: { kind: "builtin", name: "party" },
    });
    return {
      tyconInternedDname: this.dname(i.name),
      paramInternedStr: this.str("this"),
      choices: i.choices.map((c) => this.choice(c, controllers)),
      view: this.type(i.view),
    };
  }

  private module(m: ModuleSignature): WModule {
    return {
      nameInternedDname: this.dname(m.name),
      flags: {
        forbidPartyLiterals: true,
        dontDivulgeContractIdsInCreateArguments: true,
        dontDiscloseNonConsumingChoicesToObservers: true,
      },
      dataTypes: m.dataTypes.map((d) => this.dataType(d)),
      templates: m.templates.map((t) => this.template(m, t)),
      interfaces: m.interfaces.map((i) => this.iface(m, i)),
    };
  }

  packageMessage(): object {
    // Metadata strings first: a reader that only wants name and version finds them early.
    const metadata = {
      nameInternedStr: this.str(this.def.name),
      versionInternedStr: this.str(this.def.version),
    };
    const modules = this.def.modules.map((m) => this.module(m));
    return {
      modules,
      internedStrings: this.strings,
      internedDottedNames: this.dottedNames,
      metadata,
      internedTypes: this.types,
      ...(this.flat ? { packageImports: { importedPackages: this.imports } } : {}),
    };
  }
}

const PACKAGE_NAME = /^[A-Za-z0-9_-]{1,255}$/;
const PACKAGE_VERSION = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$/;

/** Encodes a package definition as a .dalf (a serialized Archive) and computes its id. */
export function encodePackage(def: PackageDefinition, options: EncodeOptions = {}): EncodedPackage {
  const lfVersion = options.lfVersion ?? "2.3";
  if (!PACKAGE_NAME.test(def.name))
    throw new LfEncodeError(`invalid package name ${JSON.stringify(def.name)}`);
  if (!PACKAGE_VERSION.test(def.version)) {
    throw new LfEncodeError(`invalid package version ${JSON.stringify(def.version)}`);
  }
  const schema = archiveSchema();
  const pkg = new PackageWriter(def, lfVersion).packageMessage();
  const packageBytes = schema.Package.encode(pkg).finish();
  const payload = schema.ArchivePayload.encode({
    minor: VERSION_TO_MINOR[lfVersion],
    patch: 0,
    damlLf_2: packageBytes,
  }).finish();
  const packageId = sha256Hex(payload);
  const dalf = schema.Archive.encode({ payload, hash: packageId }).finish();
  return { packageId, dalf, lfVersion };
}
