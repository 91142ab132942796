import type protobuf from "protobufjs";
import type { PackageSignatures } from "../package-signatures.js";
import { timestampToIso } from "../rules/timestamps.js";
import {
  type IdentifierParts,
  identifierText,
  protoAnyUnknownFields,
  UNTYPED_VALUE_OUTPUT,
  type WellKnownKind,
} from "../rules/well-known.js";
import { ByteKeyedCache } from "./byte-keyed-cache.js";
import { varint64Number } from "./protobuf-scalars.js";
import { ascii, EMPTY_OBJECT } from "./text-writer.js";
import type { MessageWriter, TranscodeRun } from "./writer-types.js";

/**
 * The well-known kinds of rules/well-known.ts written from their bytes; an Identifier also
 * notes packages whose signatures are not loaded.
 */

type Reader = protobuf.Reader;

/**
 * Timestamp as timestampToIso writes it (UTC, the fraction in groups of three digits), the
 * date part cached per second and the fraction written as digits: no string per timestamp.
 */
function timestampWriter(): MessageWriter {
  let lastSeconds = Number.NaN;
  let base = ascii("");
  return (r, end, w) => {
    let seconds = 0;
    let nanos = 0;
    while (r.pos < end) {
      const tag = r.uint32();
      if (tag >>> 3 === 1) seconds = varint64Number(r);
      else if (tag >>> 3 === 2) nanos = r.int32();
      else r.skipType(tag & 7);
    }
    if (!(nanos >= 0 && nanos < 1_000_000_000)) {
      // Not a valid Timestamp: whatever timestampToIso makes of it.
      w.raw(`"${timestampToIso({ seconds, nanos })}"`);
      return;
    }
    if (seconds !== lastSeconds) {
      base = ascii(`"${timestampToIso({ seconds, nanos: 0 }).slice(0, -1)}`);
      lastSeconds = seconds;
    }
    w.bytes(base);
    if (nanos !== 0) {
      w.byte(0x2e);
      if (nanos % 1_000_000 === 0) w.padded(nanos / 1_000_000, 3);
      else if (nanos % 1000 === 0) w.padded(nanos / 1000, 6);
      else w.padded(nanos, 9);
    }
    w.bytes(ZULU);
  };
}

/** An Identifier's fields from its bytes [r.pos, end). */
export function readIdentifier(r: Reader, end: number): IdentifierParts {
  let packageId = "";
  let moduleName = "";
  let entityName = "";
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        packageId = r.string();
        break;
      case 2:
        moduleName = r.string();
        break;
      case 3:
        entityName = r.string();
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return { packageId, moduleName, entityName };
}

const ZULU = ascii('Z"');
const ANY_TYPE_URL = ascii('"typeUrl":');
const ANY_VALUE = ascii('"value":');
const ANY_UNKNOWN_FIELDS = ascii(`"unknownFields":${JSON.stringify(protoAnyUnknownFields())}`);

export function wellKnownWriters(
  signatures: Pick<PackageSignatures, "has">,
  run: TranscodeRun,
): Record<WellKnownKind, MessageWriter> {
  return {
    timestamp: timestampWriter(),
    empty: (r, end, w) => {
      r.pos = end;
      w.bytes(EMPTY_OBJECT);
    },
    protoAny: (r, end, w) => {
      let typeUrl = false;
      let value = false;
      w.byte(0x7b);
      while (r.pos < end) {
        const tag = r.uint32();
        if (tag >>> 3 === 1) {
          w.bytes(ANY_TYPE_URL);
          w.wireString(r);
          typeUrl = true;
        } else if (tag >>> 3 === 2) {
          w.bytes(ANY_VALUE);
          w.wireBase64(r);
          value = true;
        } else {
          r.skipType(tag & 7);
          continue;
        }
        w.byte(0x2c);
      }
      if (!typeUrl) w.raw('"typeUrl":"",');
      if (!value) w.raw('"value":"",');
      w.bytes(ANY_UNKNOWN_FIELDS);
      w.byte(0x7d);
    },
    identifier: identifierWriter(signatures, run),
    untypedValue: () => {
      throw new Error(UNTYPED_VALUE_OUTPUT);
    },
  };
}

interface IdentifierText {
  readonly packageId: string;
  /** `"pkg:Mod:Ent"` as bytes. */
  readonly text: Uint8Array;
}

/** Identifiers a stream names are few: past this many the cache starts over. */
const MAX_IDENTIFIERS = 4096;

/**
 * `"pkg:Mod:Ent"`, cached by the Identifier's bytes; a package whose signatures are not
 * loaded is noted (as IdentifierCollector: only a named package needs them), on every
 * occurrence since the cache may evict it.
 */
function identifierWriter(signatures: Pick<PackageSignatures, "has">, run: TranscodeRun): MessageWriter {
  const cache = new ByteKeyedCache<IdentifierText>();
  return (r, end, w) => {
    const start = r.pos;
    let known = cache.get(r.buf, start, end);
    if (known === undefined) {
      const id = readIdentifier(r, end);
      known = {
        packageId: id.packageId,
        text: ascii(JSON.stringify(identifierText(id))),
      };
      if (cache.size >= MAX_IDENTIFIERS) cache.clear();
      cache.set(r.buf, start, end, known);
    }
    if (known.packageId !== "" && !signatures.has(known.packageId)) run.missing.push(known.packageId);
    w.bytes(known.text);
    r.pos = end;
  };
}
