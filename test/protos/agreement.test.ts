import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import protobuf from "protobufjs";

// Cross-checks our hand-written protos against the published protobuf-ts bindings of the Ledger API
// (@canton-network/core-ledger-proto), so a typo in a field number or type cannot slip through.

const PROTOS = "protos";

// The published bindings 1.7.0 were generated from an older Canton (3.3 line: transaction trees,
// unassign_id, requesting_parties). Where Canton 3.5 changed a fact we follow 3.5, and list the change
// here. Each entry is checked to still differ, so the list cannot rot silently.
const V2 = "com.daml.ledger.api.v2";

// Moved from the interactive package to crypto.proto in 3.5; compared field by field under the new name.
const MOVED: Record<string, string> = {
  [`${V2}.interactive.Signature`]: `${V2}.Signature`,
  [`${V2}.interactive.SignatureFormat`]: `${V2}.SignatureFormat`,
  [`${V2}.interactive.SigningAlgorithmSpec`]: `${V2}.SigningAlgorithmSpec`,
};

// unassign_id became reassignment_id in 3.5 at the same number; compared under the new name.
const RENAMED: Record<string, string> = {
  [`${V2}.AssignCommand.unassign_id`]: "reassignment_id",
  [`${V2}.UnassignedEvent.unassign_id`]: "reassignment_id",
  [`${V2}.AssignedEvent.unassign_id`]: "reassignment_id",
};

// Removed in 3.5. Removed fields must be reserved (number and name) in our protos.
const REMOVED: { reason: string; items: string[] }[] = [
  {
    reason: "3.5 dropped transaction trees; flat transactions with a TransactionFormat replace them",
    items: [
      `${V2}.TransactionTree`,
      `${V2}.TreeEvent`,
      `${V2}.SubmitAndWaitForTransactionTreeResponse`,
      `${V2}.GetTransactionTreeResponse`,
      `${V2}.GetUpdateTreesResponse`,
      `${V2}.GetTransactionByIdRequest`,
      `${V2}.GetTransactionByOffsetRequest`,
      `${V2}.GetTransactionResponse`,
      `${V2}.CommandService/SubmitAndWaitForTransactionTree`,
      `${V2}.UpdateService/GetUpdateTrees`,
      `${V2}.UpdateService/GetTransactionTreeByOffset`,
      `${V2}.UpdateService/GetTransactionTreeById`,
      `${V2}.UpdateService/GetTransactionByOffset`,
      `${V2}.UpdateService/GetTransactionById`,
    ],
  },
  {
    reason: "3.5 replaced TransactionFilter + verbose by EventFormat / UpdateFormat",
    items: [
      `${V2}.TransactionFilter`,
      `${V2}.GetActiveContractsRequest.filter`,
      `${V2}.GetActiveContractsRequest.verbose`,
      `${V2}.GetUpdatesRequest.filter`,
      `${V2}.GetUpdatesRequest.verbose`,
    ],
  },
  {
    reason: "3.5 replaced requesting_parties by event_format",
    items: [`${V2}.GetEventsByContractIdRequest.requesting_parties`],
  },
];

// protobuf-ts ScalarType numbers.
const SCALAR_NAMES: Record<number, string> = {
  1: "double",
  2: "float",
  3: "int64",
  4: "uint64",
  5: "int32",
  6: "fixed64",
  7: "fixed32",
  8: "bool",
  9: "string",
  12: "bytes",
  13: "uint32",
  15: "sfixed32",
  16: "sfixed64",
  17: "sint32",
  18: "sint64",
};

type EnumInfo = [typeName: string, values: Record<string, string | number>, prefix?: string];

interface BindingMessage {
  typeName: string;
  fields: readonly BindingField[];
}
interface BindingField {
  no: number;
  name: string;
  kind: "scalar" | "message" | "enum" | "map";
  T?: number | (() => BindingMessage) | (() => EnumInfo);
  K?: number;
  V?: { kind: "scalar" | "message" | "enum"; T: number | (() => BindingMessage) | (() => EnumInfo) };
  repeat?: number;
  opt?: boolean;
  oneof?: string;
}
interface BindingService {
  typeName: string;
  methods: readonly {
    name: string;
    serverStreaming?: boolean;
    clientStreaming?: boolean;
    I: BindingMessage;
    O: BindingMessage;
  }[];
}

// The packages we own: com.daml.ledger.api.v2 and its sub-packages, and google.rpc itself.
const OWN_PACKAGE = /^(com\.daml\.ledger\.api\.v2(\.[a-z0-9_]+)*|google\.rpc)\.[A-Z]/;

function isMessageType(x: unknown): x is BindingMessage {
  const o = x as BindingMessage | null;
  return typeof o === "object" && o !== null && typeof o.typeName === "string" && Array.isArray(o.fields);
}
function isServiceType(x: unknown): x is BindingService {
  const o = x as BindingService | null;
  return typeof o === "object" && o !== null && typeof o.typeName === "string" && Array.isArray(o.methods);
}

async function loadBindings(): Promise<{
  messages: Map<string, BindingMessage>;
  services: Map<string, BindingService>;
  enums: Map<string, EnumInfo>;
}> {
  const require = createRequire(import.meta.url);
  const main = require.resolve("@canton-network/core-ledger-proto");
  const protoDir = join(dirname(main), "..", "esm", "_proto");
  const modules = readdirSync(protoDir, { recursive: true, encoding: "utf8" })
    .map((f) => f.split("\\").join("/"))
    .filter((f) => /^(com\/daml\/ledger\/api\/v2|google\/rpc)\//.test(f))
    .filter((f) => f.endsWith(".js") && !f.endsWith(".client.js") && !f.endsWith(".d.js"));
  const messages = new Map<string, BindingMessage>();
  const services = new Map<string, BindingService>();
  const enums = new Map<string, EnumInfo>();
  const visit = (m: BindingMessage): void => {
    if (messages.has(m.typeName) || !OWN_PACKAGE.test(m.typeName)) return;
    messages.set(m.typeName, m);
    for (const f of m.fields) {
      for (const t of [f.T, f.V?.T]) {
        if (typeof t !== "function") continue;
        const ref = t();
        if (Array.isArray(ref)) {
          if (OWN_PACKAGE.test(ref[0])) enums.set(ref[0], ref);
        } else visit(ref);
      }
    }
  };
  for (const file of modules) {
    const mod = (await import(pathToFileURL(join(protoDir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(mod)) {
      if (isServiceType(value) && OWN_PACKAGE.test(value.typeName)) {
        services.set(value.typeName, value);
        for (const m of value.methods) {
          visit(m.I);
          visit(m.O);
        }
      } else if (isMessageType(value)) visit(value);
    }
  }
  return { messages, services, enums };
}

function loadOurs(): protobuf.Root {
  const files = readdirSync(PROTOS, { recursive: true, encoding: "utf8" })
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".proto") && /^(com\/daml\/ledger\/api\/v2|google\/rpc)\//.test(f));
  const root = new protobuf.Root();
  // google/protobuf/* imports are served from protobufjs's bundled common types before this is asked.
  root.resolvePath = (_origin, target) => join(PROTOS, target);
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  return root;
}

// protobufjs's own isReservedId treats ranges as end-exclusive, which misses `reserved 3;`.
function isReserved(type: protobuf.Type, key: number | string): boolean {
  return (type.reserved ?? []).some((r) =>
    typeof r === "string" ? r === key : typeof key === "number" && r[0]! <= key && key <= r[1]!,
  );
}

const lowerCamel = (s: string): string => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

function describeBindingType(kind: string, t: BindingField["T"]): string {
  if (kind === "scalar") return SCALAR_NAMES[t as number] ?? `scalar#${String(t)}`;
  const ref = (t as () => BindingMessage | EnumInfo)();
  const name = Array.isArray(ref) ? ref[0] : ref.typeName;
  return MOVED[name] ?? name;
}

function describeOurType(f: protobuf.Field): string {
  return f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type;
}

describe("protos/ agree with @canton-network/core-ledger-proto", async () => {
  const bindings = await loadBindings();
  const root = loadOurs();
  const diffs: string[] = [];
  // Definitions Canton 3.5 added after the bindings' build: nothing to compare them with.
  const additions: string[] = [];
  const counts = { messages: 0, fields: 0, enums: 0, enumValues: 0, services: 0, methods: 0 };

  const removed = new Set(REMOVED.flatMap((r) => r.items));
  const renamedTo = (owner: string, field: string): string => RENAMED[`${owner}.${field}`] ?? field;
  const moved = (name: string): string => MOVED[name] ?? name;

  for (const [bindingName, msg] of bindings.messages) {
    const name = moved(bindingName);
    if (removed.has(name)) {
      if (root.lookup(name)) diffs.push(`${name}: listed as removed in 3.5 but still defined`);
      continue;
    }
    const ours = root.lookup(name);
    if (!(ours instanceof protobuf.Type)) {
      diffs.push(`${name}: message missing`);
      continue;
    }
    counts.messages++;
    for (const bf of msg.fields) {
      const where = `${name}.${bf.name}`;
      if (removed.has(where)) {
        if (ours.fields[bf.name]) diffs.push(`${where}: listed as removed in 3.5 but still defined`);
        if (!isReserved(ours, bf.no) || !isReserved(ours, bf.name))
          diffs.push(`${where}: removed but not reserved`);
        continue;
      }
      const ourName = renamedTo(bindingName, bf.name);
      if (ourName !== bf.name && ours.fields[bf.name])
        diffs.push(`${where}: listed as renamed but still defined`);
      const of = ours.fields[ourName];
      if (!of) {
        diffs.push(`${where}: field missing`);
        continue;
      }
      counts.fields++;
      if (of.id !== bf.no) diffs.push(`${where}: number ${of.id}, bindings ${bf.no}`);
      if (bf.kind === "map") {
        const theirs = `map<${SCALAR_NAMES[bf.K!]}, ${describeBindingType(bf.V!.kind, bf.V!.T)}>`;
        const mine =
          of instanceof protobuf.MapField
            ? `map<${of.keyType}, ${describeOurType(of)}>`
            : describeOurType(of);
        if (mine !== theirs) diffs.push(`${where}: type ${mine}, bindings ${theirs}`);
      } else {
        const theirs = describeBindingType(bf.kind, bf.T);
        const mine = of instanceof protobuf.MapField ? "map" : describeOurType(of);
        if (mine !== theirs) diffs.push(`${where}: type ${mine}, bindings ${theirs}`);
        const ourKind =
          of.resolvedType instanceof protobuf.Enum ? "enum" : of.resolvedType ? "message" : "scalar";
        if (ourKind !== bf.kind) diffs.push(`${where}: kind ${ourKind}, bindings ${bf.kind}`);
      }
      const repeated = (bf.repeat ?? 0) !== 0;
      if (of.repeated !== repeated) diffs.push(`${where}: repeated ${of.repeated}, bindings ${repeated}`);
      // protobuf-ts marks every singular message field optional, so presence is only comparable on
      // scalars and enums.
      const optional = of.options?.proto3_optional === true;
      if (bf.kind !== "message" && bf.kind !== "map" && optional !== (bf.opt === true)) {
        diffs.push(`${where}: proto3 optional ${optional}, bindings ${bf.opt === true}`);
      }
      const oneof = of.partOf && !optional ? lowerCamel(of.partOf.name) : undefined;
      if (oneof !== bf.oneof) diffs.push(`${where}: oneof ${oneof}, bindings ${bf.oneof}`);
    }
    for (const of of ours.fieldsArray) {
      if (!msg.fields.some((bf) => renamedTo(bindingName, bf.name) === of.name))
        additions.push(`${name}.${of.name}`);
    }
  }

  for (const [bindingName, [, values, prefix]] of bindings.enums) {
    const name = moved(bindingName);
    const ours = root.lookup(name);
    if (!(ours instanceof protobuf.Enum)) {
      diffs.push(`${name}: enum missing`);
      continue;
    }
    counts.enums++;
    const theirs = Object.entries(values).filter((e): e is [string, number] => typeof e[1] === "number");
    for (const [key, no] of theirs) {
      const full = `${prefix ?? ""}${key}`;
      counts.enumValues++;
      if (ours.values[full] !== no) diffs.push(`${name}.${full}: value ${ours.values[full]}, bindings ${no}`);
    }
    for (const key of Object.keys(ours.values)) {
      if (!theirs.some(([k]) => `${prefix ?? ""}${k}` === key)) additions.push(`${name}.${key}`);
    }
  }

  for (const [name, svc] of bindings.services) {
    const ours = root.lookup(name);
    if (!(ours instanceof protobuf.Service)) {
      diffs.push(`${name}: service missing`);
      continue;
    }
    counts.services++;
    for (const bm of svc.methods) {
      const where = `${name}/${bm.name}`;
      const om = ours.methods[bm.name];
      if (removed.has(where)) {
        if (om) diffs.push(`${where}: listed as removed in 3.5 but still defined`);
        continue;
      }
      if (!om) {
        diffs.push(`${where}: method missing`);
        continue;
      }
      counts.methods++;
      const input = om.resolvedRequestType?.fullName.slice(1);
      const output = om.resolvedResponseType?.fullName.slice(1);
      if (input !== moved(bm.I.typeName)) diffs.push(`${where}: input ${input}, bindings ${bm.I.typeName}`);
      if (output !== moved(bm.O.typeName))
        diffs.push(`${where}: output ${output}, bindings ${bm.O.typeName}`);
      if (!!om.requestStream !== !!bm.clientStreaming) diffs.push(`${where}: client streaming differs`);
      if (!!om.responseStream !== !!bm.serverStreaming) diffs.push(`${where}: server streaming differs`);
    }
    for (const m of ours.methodsArray) {
      if (!svc.methods.some((bm) => bm.name === m.name)) additions.push(`${name}/${m.name}`);
    }
  }

  // Every exception must still describe a real difference with the bindings.
  const bindingFields = new Set(
    [...bindings.messages.values()].flatMap((m) => m.fields.map((f) => `${m.typeName}.${f.name}`)),
  );
  const bindingMethods = new Set(
    [...bindings.services.values()].flatMap((s) => s.methods.map((m) => `${s.typeName}/${m.name}`)),
  );
  for (const [from, to] of Object.entries(MOVED)) {
    if (!bindings.messages.has(from) && !bindings.enums.has(from))
      diffs.push(`exception ${from}: not in the bindings`);
    if (root.lookup(from)) diffs.push(`exception ${from}: still defined under the old name`);
    if (!root.lookup(to)) diffs.push(`exception ${from}: ${to} missing`);
  }
  for (const key of Object.keys(RENAMED)) {
    if (!bindingFields.has(key)) diffs.push(`exception ${key}: not in the bindings`);
  }
  for (const item of removed) {
    if (!bindings.messages.has(item) && !bindingFields.has(item) && !bindingMethods.has(item)) {
      diffs.push(`exception ${item}: not in the bindings`);
    }
  }

  it("finds the bindings' Ledger API v2 and google.rpc definitions", () => {
    assert.ok(bindings.services.size >= 16, `only ${bindings.services.size} services in the bindings`);
    assert.ok(bindings.messages.size >= 220, `only ${bindings.messages.size} messages in the bindings`);
  });

  it("checks hundreds of fields", () => {
    console.log(
      `agreement checked: ${JSON.stringify(counts)}; 3.5 additions not in the bindings: ${additions.length}`,
    );
    assert.ok(counts.messages >= 200, `only ${counts.messages} messages checked`);
    assert.ok(counts.fields >= 550, `only ${counts.fields} fields checked`);
    assert.ok(counts.enumValues >= 25, `only ${counts.enumValues} enum values checked`);
    assert.ok(counts.methods >= 45, `only ${counts.methods} methods checked`);
  });

  it("agrees on every message, field, enum value and method, apart from the listed 3.5 changes", () => {
    assert.equal(diffs.length, 0, `${diffs.length} disagreements:\n${diffs.join("\n")}`);
  });
});
