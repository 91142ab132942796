import type protobuf from "protobufjs";
import type { SignatureResolver, TypeConName, TypedValueCodec, ValueCodec } from "../../lf/index.js";
import { LEDGER_API_PACKAGE } from "../../proto/ledger-api-protos.js";
import type { DamlFieldLayout, MessageLayout } from "../rules/message-layout.js";
import { typedCodecOf } from "../rules/typed-codecs.js";
import type { IdentifierParts } from "../rules/well-known.js";
import { ByteKeyedCache } from "./byte-keyed-cache.js";
import { type WireType, WireValueCompiler, type WireWriter } from "./daml-value-writers.js";
import { ascii, COMMA, NULL, type TextWriter } from "./text-writer.js";
import { readIdentifier } from "./well-known-writers.js";
import type { TailWriter, TranscodeRun } from "./writer-types.js";

/**
 * The Daml fields of a message (rules/message-rules.ts: create arguments, contract keys,
 * interface views, choice arguments and results) as JSON text, typed by the package
 * signatures. Their converters are cached per owner (template / interface) and choice by the
 * bytes of the fields that name them, so the hot path makes no lookup string and no
 * ValueCodec lookup: the wire writers of daml-value-writers.ts when the value is on their
 * path, else the object path (decode, ValueCodec.toJson, JSON.stringify), which also gives
 * the errors of values that do not match their type.
 *
 * Compiled writers stay valid when the package cache evicts a package (a package id names
 * immutable content; events of an evicted package are held back by the transcoder's
 * missing-package check until it is loaded again); the caches are bounded instead.
 */

type Reader = protobuf.Reader;

/** What @grpc/proto-loader hands the object path (PROTO_OPTIONS), for the value codec. */
export const DECODED_OBJECT: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

/** Past this many cached entries (owners, choices, compiled types) the caches start over. */
const MAX_ENTRIES = 2048;

/** One typed position: its codec (object path) and its wire writer once compiled. */
interface Slot {
  readonly codec: () => TypedValueCodec;
  /** undefined: not compiled yet; null: no wire writer (the object path only). */
  wire: WireWriter | null | undefined;
}

/** The slots of a message's Daml fields, in rule order, for one owner (and choice). */
type Slots = readonly Slot[];

export class DamlFieldWriters {
  /** Values written through the object path since construction (the tests look at it). */
  fallbacks = 0;
  private readonly compiler: WireValueCompiler;
  private readonly caches: ByteKeyedCache<unknown>[] = [];
  private readonly valueType: protobuf.Type;
  private readonly recordType: protobuf.Type;
  private size = 0;

  constructor(
    root: protobuf.Root,
    private readonly values: ValueCodec,
    resolver: Pick<SignatureResolver, "resolveDataType">,
    private readonly run: TranscodeRun,
  ) {
    this.compiler = new WireValueCompiler(resolver);
    this.valueType = root.lookupType(`${LEDGER_API_PACKAGE}.Value`);
    this.recordType = root.lookupType(`${LEDGER_API_PACKAGE}.Record`);
  }

  /**
   * The members of `layout.daml` after the message's others; absent ones are null. A missing
   * package fails the whole element: the caller loads it and comes back.
   */
  tail(layout: MessageLayout): TailWriter {
    const fields = layout.daml;
    const { owner, choice } = fields[0] as DamlFieldLayout;
    const names = [...owner, ...(choice === undefined ? [] : [choice]), ...fields.map((f) => f.field)];
    const positions = new FieldPositions(layout.type, names);
    const choiceSlot = choice === undefined ? -1 : owner.length;
    const firstField = names.length - fields.length;
    const keys = fields.map((f) => ascii(`${JSON.stringify(f.key)}:`));
    const make = (id: TypeConName, choiceName: string): Slots =>
      fields.map((f) => slot(() => typedCodecOf(this.values, f.codec, id, choiceName)));
    const slotsAt = choiceSlot < 0 ? this.ownerSlots(make) : this.choiceSlots(make);
    const run = this.run;
    return (r, start, end, w) => {
      if (run.missing.length === 0) {
        const at = positions.scan(r, start, end);
        let ownerAt = -1;
        for (let i = 0; i < owner.length && ownerAt < 0; i++) ownerAt = at[i] as number;
        const slots = slotsAt(r, ownerAt, choiceSlot < 0 ? -1 : (at[choiceSlot] as number));
        let wrote = false;
        for (let i = 0; i < fields.length; i++) {
          const f = fields[i] as DamlFieldLayout;
          const fieldAt = at[firstField + i] as number;
          if (wrote) w.byte(COMMA);
          wrote = true;
          w.bytes(keys[i] as Uint8Array);
          // Absent: null (rules/message-layout.ts, writesNullWhenAbsent).
          if (fieldAt < 0) w.bytes(NULL);
          else this.write(slots[i] as Slot, r, fieldAt, f.record === true, w);
        }
      }
      r.pos = end;
    };
  }

  /** Slots cached by the owner's Identifier bytes (at its length prefix). */
  private ownerSlots(make: (id: TypeConName, choice: string) => Slots) {
    const cache = this.cache<Slots>();
    return (r: Reader, ownerAt: number, _choiceAt: number): Slots =>
      this.entry(cache, r, ownerAt, (id) => make(id, ""));
  }

  /** Slots cached by the owner's Identifier bytes, then by the choice name's bytes. */
  private choiceSlots(make: (id: TypeConName, choice: string) => Slots) {
    const owners = this.cache<ByteKeyedCache<Slots>>();
    return (r: Reader, ownerAt: number, choiceAt: number): Slots => {
      const choices = this.entry(owners, r, ownerAt, () => new ByteKeyedCache<Slots>());
      let slots: Slots | undefined;
      let start = 0;
      let end = 0;
      if (choiceAt >= 0) {
        r.pos = choiceAt;
        end = r.uint32() + r.pos;
        start = r.pos;
        slots = choices.get(r.buf, start, end);
      }
      if (slots === undefined) {
        const id = ownerAt < 0 ? (null as unknown as TypeConName) : identifierAt(r, ownerAt);
        slots = make(id, choiceAt < 0 ? "" : stringAt(r, choiceAt));
        if (choiceAt >= 0) choices.set(r.buf, start, end, slots);
        this.grew();
      }
      return slots;
    };
  }

  private cache<V>(): ByteKeyedCache<V> {
    const cache = new ByteKeyedCache<V>();
    this.caches.push(cache as ByteKeyedCache<unknown>);
    return cache;
  }

  /** The cached entry for the Identifier at `idAt` (not cached when the identifier is absent). */
  private entry<V>(cache: ByteKeyedCache<V>, r: Reader, idAt: number, make: (id: TypeConName) => V): V {
    if (idAt < 0) return make(null as unknown as TypeConName); // the object path fails as it always did
    r.pos = idAt;
    const end = r.uint32() + r.pos;
    const start = r.pos;
    const known = cache.get(r.buf, start, end);
    if (known !== undefined) return known;
    const made = make(readIdentifier(r, end));
    cache.set(r.buf, start, end, made);
    this.grew();
    return made;
  }

  private grew(): void {
    if (++this.size + this.compiler.size <= MAX_ENTRIES) return;
    for (const cache of this.caches) cache.clear();
    this.compiler.clear();
    this.size = 0;
  }

  /** One typed value at `at` (its length prefix; -1: absent), the wire way when it can. */
  private write(slot: Slot, r: Reader, at: number, record: boolean, w: TextWriter): void {
    const mark = w.pos;
    if (at >= 0) {
      let wire = slot.wire;
      if (wire === undefined) wire = slot.wire = this.compile(slot, record);
      if (wire) {
        try {
          r.pos = at;
          const end = r.uint32() + r.pos;
          wire(r, end, w);
          if (r.pos === end) return;
        } catch {
          // Not on the wire path (OFF_PATH, a bad value, bad bytes): the object path decides.
        }
        w.pos = mark;
      }
    }
    this.fallbacks++;
    const type = record ? this.recordType : this.valueType;
    let decoded: unknown = null;
    if (at >= 0) {
      r.pos = at;
      decoded = type.toObject(type.decode(r, r.uint32()), DECODED_OBJECT);
    }
    w.raw(JSON.stringify(slot.codec().toJson((record ? { record: decoded } : decoded) as never)));
  }

  /**
   * null when the type has no wire writer for this position; undefined when its codec cannot
   * be built now (the object path throws the error; a package it needs may be loaded later).
   */
  private compile(slot: Slot, record: boolean): WireWriter | null | undefined {
    let type: WireType;
    try {
      type = this.compiler.compile(slot.codec().type);
    } catch {
      return undefined;
    }
    return (record ? type.record : type.value) ?? null;
  }
}

function slot(codec: () => TypedValueCodec): Slot {
  return { codec, wire: undefined };
}

function identifierAt(r: Reader, at: number): IdentifierParts {
  r.pos = at;
  const end = r.uint32() + r.pos;
  return readIdentifier(r, end);
}

function stringAt(r: Reader, at: number): string {
  r.pos = at;
  return r.string();
}

/**
 * Where some fields of a message start (their length prefix, just after their tag; the last
 * occurrence wins, as in protobufjs), -1 when absent. One instance per message type: a tail
 * runs after its message's fields, so scans of one type never overlap.
 */
class FieldPositions {
  private readonly slots: number[] = [];
  private readonly positions: Int32Array;

  constructor(type: protobuf.Type, fields: readonly string[]) {
    fields.forEach((name, slot) => {
      const field = type.fields[name];
      if (!field) throw new Error(`${type.fullName} has no field ${name}`);
      this.slots[field.id] = slot;
    });
    this.positions = new Int32Array(fields.length);
  }

  scan(r: Reader, start: number, end: number): Int32Array {
    const positions = this.positions;
    positions.fill(-1);
    r.pos = start;
    while (r.pos < end) {
      const tag = r.uint32();
      const slot = this.slots[tag >>> 3];
      if (slot !== undefined) positions[slot] = r.pos;
      r.skipType(tag & 7);
    }
    return positions;
  }
}
