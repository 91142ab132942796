import type protobuf from "protobufjs";
import type { SignatureResolver, TypedValueCodec, ValueCodec } from "../lf/index.js";
import { ByteKeyedCache } from "./stream-transcoder-byte-cache.js";
import { type WireType, WireTypeCompiler, type WireWriter } from "./stream-transcoder-lf.js";
import { type LedgerId, readIdentifier } from "./stream-transcoder-well-known.js";
import type { TextWriter } from "./text-writer.js";

/**
 * The typed Daml values of stream events (create arguments, contract keys, interface views,
 * choice arguments and results) as JSON text, cached per template / interface / choice by
 * the bytes of the identifiers that name them, so the hot path makes no lookup string and
 * no ValueCodec lookup: the wire writers of stream-transcoder-lf.ts when the value is on
 * their path, else the object path (decode, ValueCodec.toJson, JSON.stringify), which also
 * gives the errors of values that do not match their type.
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

/** Past this many cached entries (templates, choices, compiled types) the caches start over. */
const MAX_ENTRIES = 2048;

/** One typed position: its codec (object path) and its wire writer once compiled. */
interface Slot {
  readonly codec: () => TypedValueCodec;
  /** undefined: not compiled yet; null: no wire writer (the object path only). */
  wire: WireWriter | null | undefined;
}

interface TemplateEntry {
  readonly payload: Slot;
  readonly key: Slot;
}

interface ChoiceEntry {
  readonly argument: Slot;
  readonly result: Slot;
}

export class TypedValueWriters {
  /** Values written through the object path since construction (the tests look at it). */
  fallbacks = 0;
  private readonly compiler: WireTypeCompiler;
  private readonly templates = new ByteKeyedCache<TemplateEntry>();
  private readonly views = new ByteKeyedCache<Slot>();
  private readonly owners = new ByteKeyedCache<ByteKeyedCache<ChoiceEntry>>();
  private readonly valueType: protobuf.Type;
  private readonly recordType: protobuf.Type;
  private size = 0;

  constructor(
    root: protobuf.Root,
    private readonly values: ValueCodec,
    resolver: Pick<SignatureResolver, "resolveDataType">,
  ) {
    this.compiler = new WireTypeCompiler(resolver);
    this.valueType = root.lookupType("com.daml.ledger.api.v2.Value");
    this.recordType = root.lookupType("com.daml.ledger.api.v2.Record");
  }

  /**
   * `createArgument` (a Record at `recordAt`) and, when present, `contractKey` (a Value at
   * `keyAt`) of the template whose Identifier is at `idAt`; positions are those of the
   * length prefixes, -1 for absent fields. Leaves r.pos anywhere.
   */
  created(r: Reader, idAt: number, recordAt: number, keyAt: number, w: TextWriter): void {
    const entry = this.entry(this.templates, r, idAt, (id) => ({
      payload: slot(() => this.values.templatePayload(id)),
      key: slot(() => this.values.contractKey(id)),
    }));
    w.raw('"createArgument":');
    this.write(entry.payload, r, recordAt, true, w);
    if (keyAt >= 0) {
      w.raw(',"contractKey":');
      this.write(entry.key, r, keyAt, false, w);
    }
  }

  /** `viewValue` (a Record at `recordAt`) of the interface at `idAt`; nothing when absent. */
  view(r: Reader, idAt: number, recordAt: number, w: TextWriter): void {
    if (recordAt < 0) return;
    const view = this.entry(this.views, r, idAt, (id) => slot(() => this.values.interfaceView(id)));
    w.raw('"viewValue":');
    this.write(view, r, recordAt, true, w);
  }

  /**
   * `choiceArgument` and, when present, `exerciseResult` (Values) of the choice named at
   * `choiceAt` (a string), exercised on the template or interface whose Identifier is at `ownerAt`.
   */
  exercised(
    r: Reader,
    ownerAt: number,
    choiceAt: number,
    argumentAt: number,
    resultAt: number,
    w: TextWriter,
  ): void {
    const choices = this.entry(this.owners, r, ownerAt, () => new ByteKeyedCache<ChoiceEntry>());
    let choice: ChoiceEntry | undefined;
    let start = 0;
    let end = 0;
    if (choiceAt >= 0) {
      r.pos = choiceAt;
      end = r.uint32() + r.pos;
      start = r.pos;
      choice = choices.get(r.buf, start, end);
    }
    if (choice === undefined) {
      const owner = ownerAt < 0 ? (null as unknown as LedgerId) : identifierAt(r, ownerAt);
      const name = choiceAt < 0 ? "" : stringAt(r, choiceAt);
      choice = {
        argument: slot(() => this.values.choiceArgument(owner, name)),
        result: slot(() => this.values.choiceResult(owner, name)),
      };
      if (choiceAt >= 0) choices.set(r.buf, start, end, choice);
      this.grew();
    }
    w.raw('"choiceArgument":');
    this.write(choice.argument, r, argumentAt, false, w);
    if (resultAt >= 0) {
      w.raw(',"exerciseResult":');
      this.write(choice.result, r, resultAt, false, w);
    }
  }

  /** The cached entry for the Identifier at `idAt` (not cached when the identifier is absent). */
  private entry<V>(cache: ByteKeyedCache<V>, r: Reader, idAt: number, make: (id: LedgerId) => V): V {
    if (idAt < 0) return make(null as unknown as LedgerId); // the object path fails as it always did
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
    this.templates.clear();
    this.views.clear();
    this.owners.clear();
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

function identifierAt(r: Reader, at: number): LedgerId {
  r.pos = at;
  const end = r.uint32() + r.pos;
  return readIdentifier(r, end);
}

function stringAt(r: Reader, at: number): string {
  r.pos = at;
  return r.string();
}
