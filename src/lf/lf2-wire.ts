/**
 * TypeScript view of the daml_lf_2 messages as protobufjs reflection reads and writes them
 * (camelCase fields, oneof name getters such as `Sum`). Only what the decoder reads and the
 * encoder writes is declared. Decoded messages carry defaults (0, "", []), and unset
 * message fields are null; encoder input simply leaves them out.
 */

/** int64-family fields decode as a Long object when the `long` module is present. */
export type WireLong = number | { toNumber(): number };

interface WUnit {
  readonly _?: never;
}

export interface WPackageRef {
  readonly Sum?: "selfPackageId" | "importedPackageIdInternedStr" | "packageImportId";
  readonly selfPackageId?: WUnit | null;
  readonly importedPackageIdInternedStr?: number;
  readonly packageImportId?: number;
}

interface WModuleId {
  readonly packageId?: WPackageRef | null;
  readonly moduleNameInternedDname?: number;
}

export interface WTypeConId {
  readonly module?: WModuleId | null;
  readonly nameInternedDname?: number;
}

export interface WKind {
  readonly Sum?: "star" | "arrow" | "nat" | "internedKind";
  readonly star?: WUnit | null;
  readonly arrow?: { readonly params?: readonly WKind[]; readonly result?: WKind | null } | null;
  readonly nat?: WUnit | null;
  readonly internedKind?: number;
}

interface WTypeVarWithKind {
  readonly varInternedStr?: number;
  readonly kind?: WKind | null;
}

interface WFieldWithType {
  readonly fieldInternedStr?: number;
  readonly type?: WType | null;
}

interface WVarWithType {
  readonly varInternedStr?: number;
  readonly type?: WType | null;
}

export interface WTypeCon {
  readonly tycon?: WTypeConId | null;
  readonly args?: readonly WType[];
}

export interface WType {
  readonly Sum?: "var" | "con" | "builtin" | "forall" | "struct" | "nat" | "syn" | "internedType" | "tapp";
  readonly var?: { readonly varInternedStr?: number; readonly args?: readonly WType[] } | null;
  readonly con?: WTypeCon | null;
  readonly builtin?: { readonly builtin?: number; readonly args?: readonly WType[] } | null;
  readonly forall?: { readonly vars?: readonly WTypeVarWithKind[]; readonly body?: WType | null } | null;
  readonly struct?: { readonly fields?: readonly WFieldWithType[] } | null;
  readonly nat?: WireLong | null;
  readonly syn?: { readonly tysyn?: WTypeConId | null; readonly args?: readonly WType[] } | null;
  readonly internedType?: number;
  readonly tapp?: { readonly lhs?: WType | null; readonly rhs?: WType | null } | null;
}

interface WFieldWithExpr {
  readonly fieldInternedStr: number;
  readonly expr: WExpr;
}

/** Only the expression forms the encoder emits; a decoder never looks inside expressions. */
export type WExpr =
  | { readonly varInternedStr: number }
  | { readonly builtinCon: number }
  | { readonly builtin: number }
  | { readonly builtinLit: { readonly textInternedStr: number } }
  | { readonly app: { readonly fun: WExpr; readonly args: readonly WExpr[] } }
  | { readonly tyApp: { readonly expr: WExpr; readonly types: readonly WType[] } }
  | { readonly recCon: { readonly tycon: WTypeCon; readonly fields: readonly WFieldWithExpr[] } }
  | {
      readonly recProj: {
        readonly tycon: WTypeCon;
        readonly fieldInternedStr: number;
        readonly record: WExpr;
      };
    }
  | { readonly abs: { readonly param: readonly WVarWithType[]; readonly body: WExpr } }
  | { readonly nil: { readonly type: WType } }
  | { readonly cons: { readonly type: WType; readonly front: readonly WExpr[]; readonly tail: WExpr } }
  | { readonly update: { readonly pure: { readonly type: WType; readonly expr: WExpr } } };

export interface WTemplateChoice {
  readonly nameInternedStr?: number;
  readonly consuming?: boolean;
  readonly controllers?: WExpr | null;
  readonly observers?: WExpr | null;
  readonly argBinder?: WVarWithType | null;
  readonly retType?: WType | null;
  readonly update?: WExpr | null;
  readonly selfBinderInternedStr?: number;
}

export interface WDefTemplate {
  readonly tyconInternedDname?: number;
  readonly paramInternedStr?: number;
  readonly signatories?: WExpr | null;
  readonly observers?: WExpr | null;
  readonly choices?: readonly WTemplateChoice[];
  readonly key?: {
    readonly type?: WType | null;
    readonly keyExpr?: WExpr | null;
    readonly maintainers?: WExpr | null;
  } | null;
  readonly implements?: readonly {
    readonly interface?: WTypeConId | null;
    readonly body?: { readonly methods?: readonly unknown[]; readonly view?: WExpr | null } | null;
  }[];
}

export interface WDefInterface {
  readonly tyconInternedDname?: number;
  readonly paramInternedStr?: number;
  readonly choices?: readonly WTemplateChoice[];
  readonly view?: WType | null;
}

export interface WDefDataType {
  readonly nameInternedDname?: number;
  readonly params?: readonly WTypeVarWithKind[];
  readonly serializable?: boolean;
  readonly DataCons?: "record" | "variant" | "enum" | "interface";
  readonly record?: { readonly fields?: readonly WFieldWithType[] } | null;
  readonly variant?: { readonly fields?: readonly WFieldWithType[] } | null;
  readonly enum?: { readonly constructorsInternedStr?: readonly number[] } | null;
  readonly interface?: WUnit | null;
}

export interface WModule {
  readonly nameInternedDname?: number;
  readonly flags?: {
    readonly forbidPartyLiterals?: boolean;
    readonly dontDivulgeContractIdsInCreateArguments?: boolean;
    readonly dontDiscloseNonConsumingChoicesToObservers?: boolean;
  } | null;
  readonly dataTypes?: readonly WDefDataType[];
  readonly templates?: readonly WDefTemplate[];
  readonly interfaces?: readonly WDefInterface[];
}

export interface WPackage {
  readonly modules?: readonly WModule[];
  readonly internedStrings?: readonly string[];
  readonly internedDottedNames?: readonly { readonly segmentsInternedStr?: readonly number[] }[];
  readonly metadata?: { readonly nameInternedStr?: number; readonly versionInternedStr?: number } | null;
  readonly internedTypes?: readonly WType[];
  readonly internedKinds?: readonly WKind[];
  readonly ImportsSum?: "noImportedPackagesReason" | "packageImports";
  readonly noImportedPackagesReason?: string;
  readonly packageImports?: { readonly importedPackages?: readonly string[] } | null;
}

export interface WArchivePayload {
  readonly Sum?: "damlLf_1" | "damlLf_2";
  readonly minor?: string;
  readonly patch?: number;
  readonly damlLf_1?: Uint8Array | null;
  readonly damlLf_2?: Uint8Array | null;
}

export interface WArchive {
  readonly hashFunction?: number;
  readonly payload?: Uint8Array;
  readonly hash?: string;
}

/** LF BuiltinType enum values used by both directions. */
export const BUILTIN = {
  UNIT: 0,
  BOOL: 1,
  INT64: 2,
  DATE: 3,
  TIMESTAMP: 4,
  NUMERIC: 5,
  PARTY: 6,
  TEXT: 7,
  CONTRACT_ID: 8,
  OPTIONAL: 9,
  LIST: 10,
  GENMAP: 11,
  ANY: 13,
  ANY_EXCEPTION: 14,
  TYPE_REP: 15,
  ARROW: 16,
  UPDATE: 17,
  FAILURE_CATEGORY: 18,
  TEXTMAP: 19,
  TEXTMAP_LEGACY: 1001,
  BIGNUMERIC: 1002,
  ROUNDING_MODE: 1003,
} as const;

export const BUILTIN_CON_UNIT = 0;
export const BUILTIN_FUNCTION_ERROR = 1;
