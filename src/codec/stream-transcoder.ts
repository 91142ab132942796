import protobuf from "protobufjs";
import type { ValueCodec } from "../lf/index.js";
import { damlJsonOverrides } from "./daml-json-overrides.js";
import { IdentifierCollector } from "./identifier-collector.js";
import type { PackageSignatures } from "./package-signatures.js";
import { ProtoJsonCodec, pascalCase } from "./proto-json.js";
import { damlTypePlans } from "./stream-transcoder-daml.js";
import {
  type MessageWriter,
  MissingPackagesError,
  type OneofCaseStyle,
  type TranscodeRun,
  type TypePlan,
  WireLayoutError,
} from "./stream-transcoder-plan.js";
import { DECODED_OBJECT, TypedValueWriters } from "./stream-transcoder-values.js";
import { wellKnownPlans } from "./stream-transcoder-well-known.js";
import { writeLong, writeNumber, writeVarint64 } from "./text-json.js";
import {
  ascii,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  FALSE,
  OPEN_BRACE,
  OPEN_BRACKET,
  TextWriter,
  TRUE,
} from "./text-writer.js";

export { MissingPackagesError } from "./stream-transcoder-plan.js";

/**
 * Stream elements from their protobuf bytes straight to the JSON text the object path
 * (`LedgerJson.toJsonNow` + `JSON.stringify` of the proto-loader object) writes, without the
 * decoded object or the JSON object in between: on the update stream those two layers and the
 * garbage they leave were most of the gateway's CPU.
 *
 * Writers are compiled once per message type by reflection over the protobufjs Root (closures
 * specialised per field). A message is read in one pass in wire order, each field appended as
 * text; the defaults of scalar and repeated fields not on the wire come after, so the output
 * has the same members as the object path (key order aside). Daml values are typed with the
 * package signatures by writers compiled per LF type (stream-transcoder-lf.ts).
 *
 * @example
 * const transcoder = new StreamTranscoder({ root, signatures, values });
 * const toText = transcoder.forType("com.daml.ledger.api.v2.GetUpdatesResponse");
 * try { frame = toText(bytes) } catch (e) { if (e instanceof MissingPackagesError) ... }
 */
export interface StreamTranscoderDeps {
  readonly root: protobuf.Root;
  /**
   * Whether a package's signatures are loaded (the transcoder never loads them itself), and
   * the data types the value writers are compiled from.
   */
  readonly signatures: Pick<PackageSignatures, "has" | "resolveDataType">;
  /** The value codec over those signatures (the cache's own, so eviction clears it). */
  readonly values: ValueCodec;
}

/** bytes -> JSON text; throws MissingPackagesError when signatures must be loaded first. */
export type Transcode = (bytes: Uint8Array) => string;

type Reader = protobuf.Reader;
/** One value of a field at r.pos (length prefix included for length-delimited types). */
type ValueWriter = (r: Reader, w: TextWriter) => void;

interface FieldStep {
  /** `"name":` as bytes. */
  readonly key: Uint8Array;
  /** Bit in the message's seen-mask (0: not tracked). */
  readonly bit: number;
  /** A second occurrence is a layout the single pass does not reproduce (repeated, oneof). */
  readonly once: boolean;
  /** Left to the plan's tail. */
  readonly skip: boolean;
  readonly write: (r: Reader, wireType: number, end: number, w: TextWriter) => void;
}

interface DefaultMember {
  readonly bit: number;
  /** `"name":<default>` as bytes. */
  readonly text: Uint8Array;
}

const PACKABLE = new Set([
  "double",
  "float",
  "int32",
  "uint32",
  "sint32",
  "fixed32",
  "sfixed32",
  "int64",
  "uint64",
  "sint64",
  "fixed64",
  "sfixed64",
  "bool",
]);
/** The seen-mask is a 31-bit integer. */
const MAX_TRACKED = 31;

export class StreamTranscoder {
  private readonly writers = new Map<string, MessageWriter>();
  private readonly plans: Readonly<Record<string, TypePlan>>;
  private readonly run: TranscodeRun = { missing: [] };
  private readonly out = new TextWriter();
  private readonly fallbackCodec: ProtoJsonCodec;
  private readonly identifiers: IdentifierCollector;
  private readonly typed: TypedValueWriters;

  constructor(private readonly deps: StreamTranscoderDeps) {
    this.typed = new TypedValueWriters(deps.root, deps.values, deps.signatures);
    this.plans = {
      ...wellKnownPlans(deps.signatures, this.run),
      ...damlTypePlans(deps.root, this.typed, this.run),
    };
    const codec: ProtoJsonCodec = new ProtoJsonCodec(
      deps.root,
      damlJsonOverrides(() => codec, deps.values),
    );
    this.fallbackCodec = codec;
    this.identifiers = new IdentifierCollector(deps.root);
  }

  /** Daml values written through the object path so far (off the wire writers' path). */
  get valueFallbacks(): number {
    return this.typed.fallbacks;
  }

  /** The transcoder of one message type (compiled now, reused for every element). */
  forType(typeName: string): Transcode {
    const type = this.deps.root.lookupType(typeName);
    const writer = this.writer(type);
    const run = this.run;
    const out = this.out;
    return (bytes) => {
      const buffer = Buffer.isBuffer(bytes)
        ? bytes
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
      run.missing.length = 0;
      out.reset();
      try {
        writer(protobuf.Reader.create(buffer), buffer.length, out);
      } catch (error) {
        if (error instanceof WireLayoutError) return this.objectPath(type, buffer);
        throw error;
      }
      if (run.missing.length > 0) throw new MissingPackagesError([...new Set(run.missing)]);
      return out.text();
    };
  }

  /** The reference path, for the rare wire layouts the single pass does not reproduce. */
  private objectPath(type: protobuf.Type, bytes: Buffer): string {
    const typeName = type.fullName.slice(1);
    const object = type.toObject(type.decode(bytes), DECODED_OBJECT);
    const missing = [...this.identifiers.packageIds(typeName, object)].filter(
      (id) => !this.deps.signatures.has(id),
    );
    if (missing.length > 0) throw new MissingPackagesError(missing);
    return JSON.stringify(this.fallbackCodec.toJson(typeName, object));
  }

  private writer(type: protobuf.Type): MessageWriter {
    const typeName = type.fullName.slice(1);
    const known = this.writers.get(typeName);
    if (known) return known;
    const plan = this.plans[typeName] ?? {};
    if (plan.writer) {
      this.writers.set(typeName, plan.writer);
      return plan.writer;
    }
    // Recursive types: a forwarder stands in while the fields compile.
    let compiled: MessageWriter | undefined;
    this.writers.set(typeName, (r, end, w) => (compiled as MessageWriter)(r, end, w));
    compiled = plan.flatten ? this.compileFlattened(type, plan) : this.compileMessage(type, plan);
    this.writers.set(typeName, compiled);
    return compiled;
  }

  private compileMessage(type: protobuf.Type, plan: TypePlan): MessageWriter {
    const steps: FieldStep[] = [];
    const defaults: DefaultMember[] = [];
    let tracked = 0;
    const nextBit = () => {
      if (tracked === MAX_TRACKED) throw new Error(`${type.fullName}: too many fields for the transcoder`);
      return 1 << tracked++;
    };
    const skip = new Set(plan.skip ?? []);
    for (const field of type.fieldsArray) {
      if (isRealOneof(field)) continue;
      const key = `${JSON.stringify(field.name)}:`;
      if (skip.has(field.name)) {
        steps[field.id] = { key: ascii(key), bit: 0, once: false, skip: true, write: () => {} };
      } else if (field.map || field.repeated) {
        const bit = nextBit();
        const write = field.map ? this.mapWriter(field) : this.repeatedWriter(field);
        steps[field.id] = { key: ascii(key), bit, once: true, skip: false, write };
        defaults.push({ bit, text: ascii(`${key}${field.map ? "{}" : "[]"}`) });
      } else {
        const value = this.valueWriter(field);
        const defaultText = field.partOf ? undefined : scalarDefault(field);
        const bit = defaultText === undefined ? 0 : nextBit();
        steps[field.id] = {
          key: ascii(key),
          bit,
          once: false,
          skip: false,
          write: (r, _t, _e, w) => value(r, w),
        };
        if (defaultText !== undefined) defaults.push({ bit, text: ascii(`${key}${defaultText}`) });
      }
    }
    for (const oneof of type.oneofsArray) {
      if (isSyntheticOneof(oneof)) continue;
      const bit = nextBit();
      const key = `${JSON.stringify(oneof.name)}:`;
      for (const field of oneof.fieldsArray) {
        const value = this.valueWriter(field);
        const style = plan.oneofCases?.[field.name] ?? { key: pascalCase(field.name), wrapped: true };
        const { open, close } = caseWrapper(style);
        steps[field.id] = {
          key: ascii(key),
          bit,
          once: true,
          skip: false,
          write: (r, _t, _e, w) => {
            w.bytes(open);
            value(r, w);
            w.bytes(close);
          },
        };
      }
      defaults.push({ bit, text: ascii(`${key}{${JSON.stringify(plan.emptyKey ?? "Empty")}:{}}`) });
    }
    const typeName = type.fullName;
    const tail = plan.tail;

    return (r, end, w) => {
      const start = r.pos;
      w.byte(OPEN_BRACE);
      const first = w.pos;
      let seen = 0;
      while (r.pos < end) {
        const tag = r.uint32();
        const step = steps[tag >>> 3];
        if (step === undefined || step.skip) {
          r.skipType(tag & 7);
          continue;
        }
        if (step.bit !== 0) {
          if (step.once && (seen & step.bit) !== 0) {
            throw new WireLayoutError(`${typeName}: field ${tag >>> 3} split or oneof set twice`);
          }
          seen |= step.bit;
        }
        if (w.pos !== first) w.byte(COMMA);
        w.bytes(step.key);
        step.write(r, tag & 7, end, w);
      }
      for (let i = 0; i < defaults.length; i++) {
        const member = defaults[i] as DefaultMember;
        if ((seen & member.bit) !== 0) continue;
        if (w.pos !== first) w.byte(COMMA);
        w.bytes(member.text);
      }
      if (tail !== undefined) {
        const mark = w.pos;
        if (w.pos !== first) w.byte(COMMA);
        const members = w.pos;
        tail(r, start, end, w);
        if (w.pos === members) w.pos = mark;
      }
      w.byte(CLOSE_BRACE);
    };
  }

  /** A message that is its oneof alone (Js* event wrappers). */
  private compileFlattened(type: protobuf.Type, plan: TypePlan): MessageWriter {
    const cases: { open: Uint8Array; close: Uint8Array; value: ValueWriter }[] = [];
    for (const field of type.fieldsArray) {
      const style = plan.oneofCases?.[field.name];
      if (!style) continue;
      cases[field.id] = { ...caseWrapper(style), value: this.valueWriter(field) };
    }
    const typeName = type.fullName;
    return (r, end, w) => {
      let set = false;
      while (r.pos < end) {
        const tag = r.uint32();
        const chosen = cases[tag >>> 3];
        if (chosen === undefined) {
          r.skipType(tag & 7);
          continue;
        }
        if (set) throw new WireLayoutError(`${typeName}: two cases set`);
        set = true;
        w.bytes(chosen.open);
        chosen.value(r, w);
        w.bytes(chosen.close);
      }
      // The object path decides what an empty wrapper means (it has no JSON shape).
      if (!set) throw new WireLayoutError(`${typeName}: no case set`);
    };
  }

  /**
   * A repeated field: its contiguous occurrences (packed chunks or one tag per element) are
   * one JSON array; a later occurrence is caught by the seen-mask.
   */
  private repeatedWriter(field: protobuf.Field): FieldStep["write"] {
    const value = this.valueWriter(field);
    const packable = PACKABLE.has(field.type) || isEnum(field);
    const number = field.id;
    return (r, wireType, end, w) => {
      w.byte(OPEN_BRACKET);
      const first = w.pos;
      let wire = wireType;
      for (;;) {
        if (packable && wire === 2) {
          const chunkEnd = r.uint32() + r.pos;
          while (r.pos < chunkEnd) {
            if (w.pos !== first) w.byte(COMMA);
            value(r, w);
          }
        } else {
          if (w.pos !== first) w.byte(COMMA);
          value(r, w);
        }
        if (r.pos >= end) break;
        const at = r.pos;
        const tag = r.uint32();
        if (tag >>> 3 !== number) {
          r.pos = at;
          break;
        }
        wire = tag & 7;
      }
      w.byte(CLOSE_BRACKET);
    };
  }

  /** A map field: entries {key = 1, value = 2} as one JSON object (keys are JSON strings). */
  private mapWriter(field: protobuf.Field): FieldStep["write"] {
    const mapField = field as unknown as protobuf.MapField;
    const keyType = mapField.keyType;
    const keyDefault = keyType === "string" ? "" : scalarTypeDefault(keyType);
    const value = this.valueWriter(field);
    const valueDefault = ascii(
      field.resolvedType && "fieldsArray" in field.resolvedType ? "{}" : (scalarDefault(field) as string),
    );
    const number = field.id;
    // Keys are few and short: read as strings, written through JSON.stringify.
    const readKey = (r: Reader): string => (keyType === "string" ? r.string() : keyText(r, keyType));
    return (r, _wireType, end, w) => {
      w.byte(OPEN_BRACE);
      const first = w.pos;
      for (;;) {
        const entryEnd = r.uint32() + r.pos;
        let key = keyDefault;
        let valueAt = -1;
        while (r.pos < entryEnd) {
          const tag = r.uint32();
          if (tag >>> 3 === 1) key = readKey(r);
          else if (tag >>> 3 === 2) {
            valueAt = r.pos;
            r.skipType(tag & 7);
          } else r.skipType(tag & 7);
        }
        if (w.pos !== first) w.byte(COMMA);
        w.string(key);
        w.byte(COLON);
        if (valueAt < 0) w.bytes(valueDefault);
        else {
          r.pos = valueAt;
          value(r, w);
          r.pos = entryEnd;
        }
        if (r.pos >= end) break;
        const at = r.pos;
        const tag = r.uint32();
        if (tag >>> 3 !== number) {
          r.pos = at;
          break;
        }
      }
      w.byte(CLOSE_BRACE);
    };
  }

  private valueWriter(field: protobuf.Field): ValueWriter {
    const resolved = field.resolvedType;
    if (resolved && "fieldsArray" in resolved) {
      const inner = this.writer(resolved as protobuf.Type);
      return (r, w) => {
        const length = r.uint32();
        inner(r, r.pos + length, w);
      };
    }
    if (resolved && "valuesById" in resolved) {
      const names = new Map<number, Uint8Array>();
      for (const [id, name] of Object.entries((resolved as protobuf.Enum).valuesById)) {
        names.set(Number(id), ascii(JSON.stringify(name)));
      }
      return (r, w) => {
        const id = r.int32();
        const name = names.get(id);
        if (name) w.bytes(name);
        else w.integer(id);
      };
    }
    return scalarWriter(field.type);
  }
}

function caseWrapper(style: OneofCaseStyle): { open: Uint8Array; close: Uint8Array } {
  const key = JSON.stringify(style.key);
  return style.wrapped
    ? { open: ascii(`{${key}:{"value":`), close: ascii("}}") }
    : { open: ascii(`{${key}:`), close: ascii("}") };
}

function keyText(r: Reader, type: string): string {
  switch (type) {
    case "bool":
      return r.bool() ? "true" : "false";
    case "int64":
    case "uint64":
    case "sint64":
    case "fixed64":
    case "sfixed64":
      return String((r[type as "int64"]() as unknown as { toString(): string }) ?? "");
    default:
      return `${r[type as "int32"]()}`;
  }
}

function scalarWriter(type: string): ValueWriter {
  switch (type) {
    case "string":
      return (r, w) => w.wireString(r);
    case "bytes":
      return (r, w) => w.wireBase64(r);
    case "bool":
      return (r, w) => w.bytes(r.bool() ? TRUE : FALSE);
    case "int32":
      return (r, w) => w.integer(r.int32());
    case "uint32":
      return (r, w) => w.integer(r.uint32());
    case "sint32":
      return (r, w) => w.integer(r.sint32());
    case "fixed32":
      return (r, w) => w.integer(r.fixed32());
    case "sfixed32":
      return (r, w) => w.integer(r.sfixed32());
    case "int64":
      return (r, w) => writeVarint64(r, w, false);
    case "uint64":
      return (r, w) => writeVarint64(r, w, true);
    case "sint64":
      return (r, w) => writeLong(w, r.sint64());
    case "fixed64":
      return (r, w) => writeLong(w, r.fixed64());
    case "sfixed64":
      return (r, w) => writeLong(w, r.sfixed64());
    case "double":
      return (r, w) => writeNumber(w, r.double());
    case "float":
      return (r, w) => writeNumber(w, r.float());
    default:
      throw new Error(`unsupported protobuf scalar type ${type}`);
  }
}

/** The text of a singular field's proto3 default, as proto-loader's `defaults: true` fills it in. */
function scalarDefault(field: protobuf.Field): string | undefined {
  const resolved = field.resolvedType;
  if (resolved && "fieldsArray" in resolved) return undefined;
  if (resolved && "valuesById" in resolved) {
    const name = (resolved as protobuf.Enum).valuesById[field.typeDefault as number];
    return JSON.stringify(name ?? field.typeDefault);
  }
  return scalarTypeDefault(field.type);
}

function scalarTypeDefault(type: string): string {
  if (type === "string" || type === "bytes") return '""';
  if (type === "bool") return "false";
  return "0";
}

function isEnum(field: protobuf.Field): boolean {
  return !!field.resolvedType && "valuesById" in field.resolvedType;
}

function isSyntheticOneof(oneof: protobuf.OneOf): boolean {
  // proto3 `optional` makes a one-field oneof named `_<field>`; it is not a JSON oneof.
  return oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0]?.name}`;
}

function isRealOneof(field: protobuf.Field): boolean {
  return field.partOf !== null && field.partOf !== undefined && !isSyntheticOneof(field.partOf);
}
