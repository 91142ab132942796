/**
 * Second step of reading a .dalf: turn a daml_lf_2.Package into type signatures.
 * Handles both type encodings: LF 2.1 (arguments inline on var/con/builtin) and LF 2.2+
 * (curried `tapp`, explicit package imports). Expressions are never looked at.
 */

import { type UnwrappedArchive, unwrapArchive } from "./archive-decode.js";
import { archiveSchema } from "./archive-proto.js";
import { LfArchiveError } from "./errors.js";
import {
  BUILTIN,
  type WDefDataType,
  type WDefInterface,
  type WDefTemplate,
  type WireLong,
  type WModule,
  type WPackage,
  type WTemplateChoice,
  type WType,
  type WTypeConId,
} from "./lf2-wire.js";
import type {
  ChoiceSignature,
  DataTypeBody,
  DataTypeSignature,
  InterfaceSignature,
  LfType,
  ModuleSignature,
  PackageSignature,
  TemplateSignature,
  TypeConName,
} from "./signature-model.js";

/**
 * A type as an application spine: LF 2.2 interns partial applications such as
 * `TApp(GenMap, Party)` on their own, so arity is only known once all arguments are in.
 */
interface Spine {
  readonly head: Head;
  readonly args: readonly Spine[];
}

type Head =
  | { readonly k: "builtin"; readonly code: number }
  | { readonly k: "con"; readonly id: TypeConName }
  | { readonly k: "var"; readonly name: string }
  | { readonly k: "nat"; readonly value: number }
  | { readonly k: "opaque"; readonly description: string };

const BUILTIN_NAMES: Readonly<Record<number, string>> = {
  [BUILTIN.ANY]: "Any",
  [BUILTIN.ANY_EXCEPTION]: "AnyException",
  [BUILTIN.TYPE_REP]: "TypeRep",
  [BUILTIN.ARROW]: "a function type",
  [BUILTIN.UPDATE]: "Update",
  [BUILTIN.FAILURE_CATEGORY]: "FailureCategory",
  [BUILTIN.BIGNUMERIC]: "BigNumeric",
  [BUILTIN.ROUNDING_MODE]: "RoundingMode",
};

function toNumber(v: WireLong | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === "number" ? v : v.toNumber();
}

class PackageReader {
  private readonly strings: readonly string[];
  private readonly dottedNames: string[];
  private readonly internedSpines: Spine[] = [];
  private readonly internedLfTypes: (LfType | undefined)[] = [];
  private readonly imports: readonly string[] | undefined;
  /** Other packages referred to; LF 2.1 has no import list, so it is collected here. */
  readonly referenced = new Set<string>();

  constructor(
    pkg: WPackage,
    private readonly packageId: string,
  ) {
    this.strings = pkg.internedStrings ?? [];
    this.dottedNames = (pkg.internedDottedNames ?? []).map((d) =>
      (d.segmentsInternedStr ?? []).map((i) => this.str(i)).join("."),
    );
    this.imports =
      pkg.ImportsSum === "packageImports" ? (pkg.packageImports?.importedPackages ?? []) : undefined;
    // Table entries only refer to smaller indices, so a single pass in order suffices.
    for (const entry of pkg.internedTypes ?? []) this.internedSpines.push(this.spine(entry));
  }

  fail(message: string): never {
    throw new LfArchiveError("malformed-package", `package ${this.packageId}: ${message}`);
  }

  str(index: number | undefined): string {
    const s = this.strings[index ?? 0];
    if (s === undefined) this.fail(`interned string index ${index} out of range`);
    return s;
  }

  dname(index: number | undefined): string {
    const s = this.dottedNames[index ?? 0];
    if (s === undefined) this.fail(`interned dotted name index ${index} out of range`);
    return s;
  }

  declaredImports(): readonly string[] | undefined {
    return this.imports;
  }

  typeConName(id: WTypeConId | null | undefined): TypeConName {
    const module = id?.module;
    if (!module) this.fail("type constructor reference without module");
    const ref = module.packageId;
    let packageId: string;
    switch (ref?.Sum) {
      case "selfPackageId":
        packageId = this.packageId;
        break;
      case "importedPackageIdInternedStr":
        packageId = this.str(ref.importedPackageIdInternedStr);
        break;
      case "packageImportId": {
        const imported = this.imports?.[ref.packageImportId ?? 0];
        if (imported === undefined) this.fail(`package import index ${ref.packageImportId} out of range`);
        packageId = imported;
        break;
      }
      default:
        return this.fail("module reference without package");
    }
    if (packageId !== this.packageId) this.referenced.add(packageId);
    return {
      packageId,
      moduleName: this.dname(module.moduleNameInternedDname),
      entityName: this.dname(id.nameInternedDname),
    };
  }

  private spine(t: WType | null | undefined): Spine {
    if (!t) return this.fail("missing type");
    const applied = (head: Head, args: readonly WType[] | undefined): Spine => ({
      head,
      args: (args ?? []).map((a) => this.spine(a)),
    });
    switch (t.Sum) {
      case "internedType": {
        const entry = this.internedSpines[t.internedType ?? 0];
        if (entry === undefined) this.fail(`interned type index ${t.internedType} out of range`);
        return entry;
      }
      case "builtin":
        return applied({ k: "builtin", code: t.builtin?.builtin ?? 0 }, t.builtin?.args);
      case "con":
        return applied({ k: "con", id: this.typeConName(t.con?.tycon) }, t.con?.args);
      case "var":
        return applied({ k: "var", name: this.str(t.var?.varInternedStr) }, t.var?.args);
      case "nat":
        return { head: { k: "nat", value: toNumber(t.nat) }, args: [] };
      case "tapp": {
        const lhs = this.spine(t.tapp?.lhs);
        return { head: lhs.head, args: [...lhs.args, this.spine(t.tapp?.rhs)] };
      }
      case "forall":
        return { head: { k: "opaque", description: "a polymorphic type" }, args: [] };
      case "struct":
        return { head: { k: "opaque", description: "a struct type" }, args: [] };
      case "syn":
        return { head: { k: "opaque", description: "a type synonym" }, args: [] };
      default:
        return this.fail("type without case");
    }
  }

  /** A definition-level type (always `interned` in LF 2, but any case is accepted). */
  type(t: WType | null | undefined): LfType {
    if (t?.Sum === "internedType") {
      const index = t.internedType ?? 0;
      const cached = this.internedLfTypes[index];
      if (cached !== undefined) return cached;
      const lf = this.lfType(this.spine(t));
      this.internedLfTypes[index] = lf;
      return lf;
    }
    return this.lfType(this.spine(t));
  }

  private lfType(s: Spine): LfType {
    const { head, args } = s;
    const unserializable = (description: string): LfType => ({ kind: "unserializable", description });
    switch (head.k) {
      case "con":
        return { kind: "con", tycon: head.id, args: args.map((a) => this.lfType(a)) };
      case "var":
        return args.length === 0
          ? { kind: "var", name: head.name }
          : unserializable("a higher-kinded application");
      case "nat":
        return { kind: "nat", value: head.value };
      case "opaque":
        return unserializable(head.description);
      case "builtin":
        break;
    }
    const arity = (n: number, build: () => LfType): LfType =>
      args.length === n ? build() : unserializable(`a builtin type applied to ${args.length} argument(s)`);
    const arg = (i: number): LfType => this.lfType(args[i] as Spine);
    switch (head.code) {
      case BUILTIN.UNIT:
        return arity(0, () => ({ kind: "builtin", name: "unit" }));
      case BUILTIN.BOOL:
        return arity(0, () => ({ kind: "builtin", name: "bool" }));
      case BUILTIN.INT64:
        return arity(0, () => ({ kind: "builtin", name: "int64" }));
      case BUILTIN.DATE:
        return arity(0, () => ({ kind: "builtin", name: "date" }));
      case BUILTIN.TIMESTAMP:
        return arity(0, () => ({ kind: "builtin", name: "timestamp" }));
      case BUILTIN.PARTY:
        return arity(0, () => ({ kind: "builtin", name: "party" }));
      case BUILTIN.TEXT:
        return arity(0, () => ({ kind: "builtin", name: "text" }));
      case BUILTIN.NUMERIC:
        return arity(1, () => {
          const scale = arg(0);
          if (scale.kind === "nat") return { kind: "builtin", name: "numeric", scale: scale.value };
          if (scale.kind === "var") return { kind: "builtin", name: "numeric", scale };
          return unserializable("Numeric applied to a non-natural");
        });
      case BUILTIN.CONTRACT_ID:
        return arity(1, () => ({ kind: "builtin", name: "contractId", template: arg(0) }));
      case BUILTIN.OPTIONAL:
        return arity(1, () => ({ kind: "builtin", name: "optional", elem: arg(0) }));
      case BUILTIN.LIST:
        return arity(1, () => ({ kind: "builtin", name: "list", elem: arg(0) }));
      case BUILTIN.TEXTMAP:
      case BUILTIN.TEXTMAP_LEGACY:
        return arity(1, () => ({ kind: "builtin", name: "textMap", value: arg(0) }));
      case BUILTIN.GENMAP:
        return arity(2, () => ({ kind: "builtin", name: "genMap", key: arg(0), value: arg(1) }));
      default:
        return unserializable(BUILTIN_NAMES[head.code] ?? `builtin type #${head.code}`);
    }
  }

  choice(c: WTemplateChoice): ChoiceSignature {
    return {
      name: this.str(c.nameInternedStr),
      consuming: c.consuming ?? false,
      argType: this.type(c.argBinder?.type),
      returnType: this.type(c.retType),
    };
  }

  dataType(d: WDefDataType): DataTypeSignature {
    const name = this.dname(d.nameInternedDname);
    const fields = (list: WDefDataType["record"]) =>
      (list?.fields ?? []).map((f) => ({ name: this.str(f.fieldInternedStr), type: this.type(f.type) }));
    let body: DataTypeBody;
    switch (d.DataCons) {
      case "record":
        body = { kind: "record", fields: fields(d.record) };
        break;
      case "variant":
        body = { kind: "variant", constructors: fields(d.variant) };
        break;
      case "enum":
        body = {
          kind: "enum",
          constructors: (d.enum?.constructorsInternedStr ?? []).map((i) => this.str(i)),
        };
        break;
      case "interface":
        body = { kind: "interface" };
        break;
      default:
        return this.fail(`data type ${name} has no constructors case`);
    }
    return {
      name,
      params: (d.params ?? []).map((p) => this.str(p.varInternedStr)),
      serializable: d.serializable ?? false,
      body,
    };
  }

  template(tpl: WDefTemplate): TemplateSignature {
    const key = tpl.key ? this.type(tpl.key.type) : undefined;
    return {
      name: this.dname(tpl.tyconInternedDname),
      choices: (tpl.choices ?? []).map((c) => this.choice(c)),
      ...(key === undefined ? {} : { key }),
      implements: (tpl.implements ?? []).map((i) => this.typeConName(i.interface)),
    };
  }

  iface(i: WDefInterface): InterfaceSignature {
    return {
      name: this.dname(i.tyconInternedDname),
      view: this.type(i.view),
      choices: (i.choices ?? []).map((c) => this.choice(c)),
    };
  }

  module(m: WModule): ModuleSignature {
    return {
      name: this.dname(m.nameInternedDname),
      dataTypes: (m.dataTypes ?? []).map((d) => this.dataType(d)),
      templates: (m.templates ?? []).map((t) => this.template(t)),
      interfaces: (m.interfaces ?? []).map((i) => this.iface(i)),
    };
  }
}

/** Decodes an already unwrapped archive (see `unwrapArchive`). */
export function decodePackage(unwrapped: UnwrappedArchive): PackageSignature {
  const { packageId, lfVersion, packageBytes } = unwrapped;
  let pkg: WPackage;
  try {
    pkg = archiveSchema().Package.decode(packageBytes) as WPackage;
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new LfArchiveError(
      "malformed-archive",
      `package ${packageId}: not a Daml-LF 2 package: ${reason}`,
      {
        cause,
      },
    );
  }
  const reader = new PackageReader(pkg, packageId);
  const metadata = pkg.metadata ?? reader.fail("package metadata is missing (required in LF 2)");
  const name = reader.str(metadata.nameInternedStr);
  const version = reader.str(metadata.versionInternedStr);
  const modules = (pkg.modules ?? []).map((m) => reader.module(m));
  const imports = reader.declaredImports() ?? [...reader.referenced].sort();
  return { packageId, lfVersion, name, version, modules, imports };
}

/** Reads one .dalf (a serialized Archive): verifies its id and returns its signatures. */
export function decodeDalf(bytes: Uint8Array): PackageSignature {
  return decodePackage(unwrapArchive(bytes));
}
