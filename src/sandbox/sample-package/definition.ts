/**
 * Type signatures of the sandbox's sample package `gateway-samples` 1.0.0, written as data. Each
 * module is there to exercise something: `Iou` choices, an interface and its view; `Account` a
 * contract key; `Types` every Daml-LF value type (the codec's round trips); `Bench` the ticks of
 * the benchmarks. The sandbox implements the templates natively (models/); these signatures are
 * what the gateway reads back from the encoded archive.
 */
import {
  type ChoiceSignature,
  type DataTypeSignature,
  type FieldSignature,
  type LfType,
  type PackageDefinition,
  SELF_PACKAGE_ID,
  type TypeConName,
  t,
} from "../../lf/index.js";

export const SAMPLE_PACKAGE_NAME = "gateway-samples";
export const SAMPLE_PACKAGE_VERSION = "1.0.0";

const self = (moduleName: string, entityName: string): TypeConName => ({
  packageId: SELF_PACKAGE_ID,
  moduleName,
  entityName,
});
const ref = (moduleName: string, entityName: string, ...args: LfType[]): LfType =>
  t.con(self(moduleName, entityName), ...args);
const field = (name: string, type: LfType): FieldSignature => ({ name, type });
const record = (name: string, fields: FieldSignature[], params: string[] = []): DataTypeSignature => ({
  name,
  params,
  serializable: true,
  body: { kind: "record", fields },
});
const choice = (module: string, name: string, returnType: LfType, consuming = true): ChoiceSignature => ({
  name,
  consuming,
  argType: ref(module, name),
  returnType,
});
/** Every template has an `Archive` choice taking an empty record. */
const archive = (module: string): ChoiceSignature => choice(module, "Archive", t.unit);

/** Numeric means Numeric 10 throughout the sample package. */
const numeric = t.numeric(10);

const iouModule = {
  name: "Iou",
  dataTypes: [
    record("Iou", [
      field("issuer", t.party),
      field("owner", t.party),
      field("currency", t.text),
      field("amount", numeric),
      field("observers", t.list(t.party)),
    ]),
    record("Transfer", [field("newOwner", t.party)]),
    record("Split", [field("splitAmount", numeric)]),
    record("SplitResult", [
      field("splitCid", t.contractId(ref("Iou", "Iou"))),
      field("restCid", t.contractId(ref("Iou", "Iou"))),
    ]),
    record("Merge", [field("otherCid", t.contractId(ref("Iou", "Iou")))]),
    record("AddObserver", [field("newObserver", t.party)]),
    record("Archive", []),
    { name: "Asset", params: [], serializable: false, body: { kind: "interface" } },
    record("AssetView", [field("owner", t.party), field("description", t.text)]),
    record("Describe", []),
  ],
  templates: [
    {
      name: "Iou",
      choices: [
        choice("Iou", "Transfer", t.contractId(ref("Iou", "Iou"))),
        choice("Iou", "Split", ref("Iou", "SplitResult")),
        choice("Iou", "Merge", t.contractId(ref("Iou", "Iou"))),
        choice("Iou", "AddObserver", t.contractId(ref("Iou", "Iou"))),
        archive("Iou"),
      ],
      implements: [self("Iou", "Asset")],
    },
  ],
  interfaces: [
    {
      name: "Asset",
      view: ref("Iou", "AssetView"),
      choices: [choice("Iou", "Describe", t.text, false)],
    },
  ],
} as const;

const accountModule = {
  name: "Account",
  dataTypes: [
    record("Account", [
      field("bank", t.party),
      field("holder", t.party),
      field("number", t.text),
      field("balance", numeric),
    ]),
    record("AccountKey", [field("bank", t.party), field("number", t.text)]),
    record("Deposit", [field("amount", numeric)]),
    record("GetBalance", []),
    record("Archive", []),
  ],
  templates: [
    {
      name: "Account",
      key: ref("Account", "AccountKey"),
      choices: [
        choice("Account", "Deposit", t.contractId(ref("Account", "Account"))),
        choice("Account", "GetBalance", numeric, false),
        archive("Account"),
      ],
      implements: [],
    },
  ],
  interfaces: [],
} as const;

const typesModule = {
  name: "Types",
  dataTypes: [
    record("AllTypes", [
      field("owner", t.party),
      field("int", t.int64),
      field("num", numeric),
      field("text", t.text),
      field("flag", t.bool),
      field("date", t.date),
      field("time", t.timestamp),
      field("party", t.party),
      field("cid", t.optional(t.contractId(ref("Iou", "Iou")))),
      field("opt", t.optional(t.int64)),
      field("nested", t.optional(t.optional(t.text))),
      field("list", t.list(t.text)),
      field("textMap", t.textMap(t.int64)),
      field("genMap", t.genMap(t.party, t.int64)),
      field("color", ref("Types", "Color")),
      field("shape", ref("Types", "Shape")),
      field("pair", ref("Types", "Pair", t.int64, t.text)),
      field("unit", t.unit),
    ]),
    {
      name: "Color",
      params: [],
      serializable: true,
      body: { kind: "enum", constructors: ["Red", "Green", "Blue"] },
    },
    {
      name: "Shape",
      params: [],
      serializable: true,
      body: {
        kind: "variant",
        constructors: [
          { name: "Circle", type: numeric },
          // A constructor with named fields gets its own record `Shape.Rect`, as damlc does.
          { name: "Rect", type: ref("Types", "Shape.Rect") },
        ],
      },
    },
    record("Shape.Rect", [field("width", numeric), field("height", numeric)]),
    record("Pair", [field("first", t.variable("a")), field("second", t.variable("b"))], ["a", "b"]),
    record("Echo", [field("value", ref("Types", "AllTypes"))]),
    record("Archive", []),
  ],
  templates: [
    {
      name: "AllTypes",
      choices: [choice("Types", "Echo", ref("Types", "AllTypes"), false), archive("Types")],
      implements: [],
    },
  ],
  interfaces: [],
} as const;

const benchModule = {
  name: "Bench",
  dataTypes: [
    record("Tick", [field("owner", t.party), field("seq", t.int64), field("payload", t.text)]),
    record("Archive", []),
  ],
  templates: [{ name: "Tick", choices: [archive("Bench")], implements: [] }],
  interfaces: [],
} as const;

export const samplePackageDefinition: PackageDefinition = {
  name: SAMPLE_PACKAGE_NAME,
  version: SAMPLE_PACKAGE_VERSION,
  modules: [iouModule, accountModule, typesModule, benchModule],
};
