/**
 * Type signatures of a Daml-LF package: what the value codec, the gateway's package cache
 * and the sandbox's archive encoder share. Only the parts of a package that describe data
 * (no expressions) are modelled, and every union is discriminated so that a half-built
 * type (a List without its element, a Numeric without a scale) cannot be written down.
 */

/** Fully qualified name of a data type, template or interface. */
export interface TypeConName {
  /** 64-char package id; `SELF_PACKAGE_ID` inside a definition that has not been hashed yet. */
  readonly packageId: string;
  /** Dotted module name, e.g. `Com.Acme.Iou`. */
  readonly moduleName: string;
  /** Dotted entity name inside the module; variant records are named `Variant.Constructor`. */
  readonly entityName: string;
}

/**
 * Stands for "this package" in a definition that is about to be encoded: the real id is
 * the hash of the encoded bytes, so it cannot be known while the definition is written.
 * Decoded signatures never contain it.
 */
export const SELF_PACKAGE_ID = "self";

/** Builtin types that take no argument. */
type PrimitiveName = "unit" | "bool" | "int64" | "text" | "party" | "date" | "timestamp";

export type LfType =
  | { readonly kind: "var"; readonly name: string }
  | { readonly kind: "con"; readonly tycon: TypeConName; readonly args: readonly LfType[] }
  /** A type-level natural, the argument of Numeric (only appears as a type argument). */
  | { readonly kind: "nat"; readonly value: number }
  | BuiltinType
  /**
   * Anything a serializable value can never have (functions, Any, Update, structs, synonyms,
   * partial applications). Kept so that decoding a real package never fails on them; the
   * value codec rejects it with `description` in the message.
   */
  | { readonly kind: "unserializable"; readonly description: string };

type BuiltinType =
  | { readonly kind: "builtin"; readonly name: PrimitiveName }
  /** `scale` is a var only inside a data type generic in its scale (`data T n = T (Numeric n)`). */
  | { readonly kind: "builtin"; readonly name: "numeric"; readonly scale: number | TypeVar }
  | { readonly kind: "builtin"; readonly name: "contractId"; readonly template: LfType }
  | { readonly kind: "builtin"; readonly name: "optional" | "list"; readonly elem: LfType }
  | { readonly kind: "builtin"; readonly name: "textMap"; readonly value: LfType }
  | { readonly kind: "builtin"; readonly name: "genMap"; readonly key: LfType; readonly value: LfType };

export type TypeVar = Extract<LfType, { kind: "var" }>;

export interface FieldSignature {
  readonly name: string;
  readonly type: LfType;
}

interface VariantConstructor {
  readonly name: string;
  readonly type: LfType;
}

export type DataTypeBody =
  | { readonly kind: "record"; readonly fields: readonly FieldSignature[] }
  | { readonly kind: "variant"; readonly constructors: readonly VariantConstructor[] }
  | { readonly kind: "enum"; readonly constructors: readonly string[] }
  /** The data type that stands for an interface's own type (no values of its own). */
  | { readonly kind: "interface" };

export interface DataTypeSignature {
  /** Dotted entity name inside the module. */
  readonly name: string;
  /** Type parameter names, in order; an enum has none. */
  readonly params: readonly string[];
  readonly serializable: boolean;
  readonly body: DataTypeBody;
}

export interface ChoiceSignature {
  readonly name: string;
  readonly consuming: boolean;
  readonly argType: LfType;
  readonly returnType: LfType;
}

export interface TemplateSignature {
  /** Also the name of the template's parameter record (same module). */
  readonly name: string;
  readonly choices: readonly ChoiceSignature[];
  /** Contract key type (LF >= 2.3); absent when the template has no key. */
  readonly key?: LfType;
  /** Interfaces this template implements. */
  readonly implements: readonly TypeConName[];
}

export interface InterfaceSignature {
  readonly name: string;
  /** The view type: a record without type parameters. */
  readonly view: LfType;
  readonly choices: readonly ChoiceSignature[];
}

export interface ModuleSignature {
  /** Dotted module name. */
  readonly name: string;
  readonly dataTypes: readonly DataTypeSignature[];
  readonly templates: readonly TemplateSignature[];
  readonly interfaces: readonly InterfaceSignature[];
}

/** The LF 2 minor versions this library reads and writes. */
export type LfVersion = "2.1" | "2.2" | "2.3" | "2.dev";

/** A package as written by hand (the sandbox's models): no id yet. */
export interface PackageDefinition {
  readonly name: string;
  readonly version: string;
  readonly modules: readonly ModuleSignature[];
}

/** A decoded package: its id is the verified hash of the archive payload. */
export interface PackageSignature extends PackageDefinition {
  readonly packageId: string;
  readonly lfVersion: LfVersion;
  /** Packages this one refers to (LF >= 2.2 declares them; for 2.1 they are collected). */
  readonly imports: readonly string[];
}

// ---------------------------------------------------------------- constructors

const prim = (name: PrimitiveName): LfType => ({ kind: "builtin", name });

/** Short constructors for writing signatures by hand (the sandbox's packages, tests). */
export const t = {
  unit: prim("unit"),
  bool: prim("bool"),
  int64: prim("int64"),
  text: prim("text"),
  party: prim("party"),
  date: prim("date"),
  timestamp: prim("timestamp"),
  numeric: (scale: number | TypeVar): LfType => ({ kind: "builtin", name: "numeric", scale }),
  contractId: (template: LfType): LfType => ({ kind: "builtin", name: "contractId", template }),
  optional: (elem: LfType): LfType => ({ kind: "builtin", name: "optional", elem }),
  list: (elem: LfType): LfType => ({ kind: "builtin", name: "list", elem }),
  textMap: (value: LfType): LfType => ({ kind: "builtin", name: "textMap", value }),
  genMap: (key: LfType, value: LfType): LfType => ({ kind: "builtin", name: "genMap", key, value }),
  variable: (name: string): TypeVar => ({ kind: "var", name }),
  con: (tycon: TypeConName, ...args: LfType[]): LfType => ({ kind: "con", tycon, args }),
} as const;

/** `Module:Entity` (the package id is left out: it is rarely what a human needs to read). */
export function qualifiedName(id: TypeConName): string {
  return `${id.moduleName}:${id.entityName}`;
}

export function sameTypeCon(a: TypeConName, b: TypeConName): boolean {
  return a.entityName === b.entityName && a.moduleName === b.moduleName && a.packageId === b.packageId;
}
