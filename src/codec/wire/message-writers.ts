import type protobuf from "protobufjs";
import {
  enumTypeOf,
  type MessageLayout,
  messageLayout,
  messageTypeOf,
  typeNameOf,
  writesNullWhenAbsent,
} from "../rules/message-layout.js";
import type { CaseRule } from "../rules/message-rules.js";
import type { WellKnownKind } from "../rules/well-known.js";
import {
  keyText,
  PACKABLE,
  scalarDefault,
  scalarTypeDefault,
  scalarWriter,
  type ValueWriter,
} from "./protobuf-scalars.js";
import {
  ascii,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  type TextWriter,
} from "./text-writer.js";
import { WireLayoutError } from "./transcode-errors.js";
import type { MessageWriter, TailWriter } from "./writer-types.js";

/**
 * The wire path's writers of protobuf messages, compiled once per message type from its
 * layout (rules/message-layout.ts: reflection + the rule table), closures specialised per
 * field. A message is read in one pass in wire order, each field appended as text; the
 * defaults of scalar and repeated fields not on the wire come after, so the output has the
 * same members as the object path (key order aside); the Daml fields come last, from a tail
 * that reads the message's bytes again.
 */

type Reader = protobuf.Reader;

export interface MessageWriterParts {
  /** The hand-written messages of rules/well-known.ts. */
  readonly wellKnown: Readonly<Record<WellKnownKind, MessageWriter>>;
  /** The writer of a message's Daml fields (layout.daml is not empty). */
  damlTail(layout: MessageLayout): TailWriter;
}

interface FieldStep {
  /** `"name":` as bytes. */
  readonly key: Uint8Array;
  /** Bit in the message's seen-mask (0: not tracked). */
  readonly bit: number;
  /** A second occurrence is a layout the single pass does not reproduce (repeated, oneof). */
  readonly once: boolean;
  /** A Daml field: the tail writes it. */
  readonly skip: boolean;
  readonly write: (r: Reader, wireType: number, end: number, w: TextWriter) => void;
}

interface DefaultMember {
  readonly bit: number;
  /** `"name":<default>` as bytes. */
  readonly text: Uint8Array;
}

/** The seen-mask is a 31-bit integer. */
const MAX_TRACKED = 31;

export class MessageWriters {
  private readonly writers = new Map<string, MessageWriter>();

  constructor(private readonly parts: MessageWriterParts) {}

  writer(type: protobuf.Type): MessageWriter {
    const typeName = typeNameOf(type);
    const known = this.writers.get(typeName);
    if (known) return known;
    const layout = messageLayout(type);
    if (layout.wellKnown) {
      const writer = this.parts.wellKnown[layout.wellKnown];
      this.writers.set(typeName, writer);
      return writer;
    }
    // Recursive types: a forwarder stands in while the fields compile.
    let compiled: MessageWriter | undefined;
    this.writers.set(typeName, (r, end, w) => (compiled as MessageWriter)(r, end, w));
    compiled = layout.flatten ? this.compileFlattened(layout) : this.compileMessage(layout);
    this.writers.set(typeName, compiled);
    return compiled;
  }

  private compileMessage(layout: MessageLayout): MessageWriter {
    const type = layout.type;
    const steps: FieldStep[] = [];
    const defaults: DefaultMember[] = [];
    let tracked = 0;
    const nextBit = () => {
      if (tracked === MAX_TRACKED) throw new Error(`${type.fullName}: too many fields for the transcoder`);
      return 1 << tracked++;
    };
    for (const daml of layout.daml) {
      steps[daml.protoField.id] = { key: ascii(""), bit: 0, once: false, skip: true, write: () => {} };
    }
    for (const field of layout.plain) {
      const key = `${JSON.stringify(field.name)}:`;
      if (field.map || field.repeated) {
        const bit = nextBit();
        const write = field.map ? this.mapWriter(field) : this.repeatedWriter(field);
        steps[field.id] = { key: ascii(key), bit, once: true, skip: false, write };
        defaults.push({ bit, text: ascii(`${key}${field.map ? "{}" : "[]"}`) });
      } else {
        // A serialized field's bytes are already its protobuf serialization: written as base64.
        const value = layout.serialized.has(field.name) ? scalarWriter("bytes") : this.valueWriter(field);
        const defaultText = writesNullWhenAbsent(field) ? "null" : scalarDefault(field);
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
    for (const oneof of layout.oneofs) {
      const bit = nextBit();
      const key = `${JSON.stringify(oneof.name)}:`;
      for (const oneofCase of oneof.cases) {
        const field = oneofCase.field;
        const value = this.valueWriter(field);
        const { open, close } = caseWrapper(oneofCase);
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
      defaults.push({ bit, text: ascii(`${key}{${JSON.stringify(oneof.emptyKey)}:{}}`) });
    }
    const typeName = type.fullName;
    const tail = layout.daml.length > 0 ? this.parts.damlTail(layout) : undefined;

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
  private compileFlattened(layout: MessageLayout): MessageWriter {
    const cases: { open: Uint8Array; close: Uint8Array; value: ValueWriter }[] = [];
    for (const oneofCase of layout.oneofs[0]?.cases ?? []) {
      cases[oneofCase.field.id] = { ...caseWrapper(oneofCase), value: this.valueWriter(oneofCase.field) };
    }
    const typeName = layout.type.fullName;
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
    const packable = PACKABLE.has(field.type) || enumTypeOf(field) !== undefined;
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
        const next = nextOccurrence(r, end, number);
        if (next < 0) break;
        wire = next;
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
    const valueDefault = ascii(messageTypeOf(field) ? "{}" : (scalarDefault(field) as string));
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
        if (nextOccurrence(r, end, number) < 0) break;
      }
      w.byte(CLOSE_BRACE);
    };
  }

  private valueWriter(field: protobuf.Field): ValueWriter {
    const message = messageTypeOf(field);
    if (message) {
      const inner = this.writer(message);
      return (r, w) => {
        const length = r.uint32();
        inner(r, r.pos + length, w);
      };
    }
    const enumType = enumTypeOf(field);
    if (enumType) {
      const names = new Map<number, Uint8Array>();
      for (const [id, name] of Object.entries(enumType.valuesById)) {
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

function caseWrapper(style: CaseRule): { open: Uint8Array; close: Uint8Array } {
  const key = JSON.stringify(style.key);
  return style.wrapped
    ? { open: ascii(`{${key}:{"value":`), close: ascii("}}") }
    : { open: ascii(`{${key}:`), close: ascii("}") };
}

/**
 * After one occurrence of field `number`: the wire type of the next field when it is the same
 * field again (r.pos past its tag), else -1 with r.pos unchanged.
 */
function nextOccurrence(r: Reader, end: number, number: number): number {
  if (r.pos >= end) return -1;
  const at = r.pos;
  const tag = r.uint32();
  if (tag >>> 3 !== number) {
    r.pos = at;
    return -1;
  }
  return tag & 7;
}
