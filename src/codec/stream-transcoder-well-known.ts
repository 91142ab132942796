import type protobuf from "protobufjs";
import type { PackageSignatures } from "./package-signatures.js";
import { ByteKeyedCache } from "./stream-transcoder-byte-cache.js";
import type { MessageWriter, TranscodeRun, TypePlan } from "./stream-transcoder-plan.js";
import { varint64Number } from "./text-json.js";
import { ascii, EMPTY_OBJECT } from "./text-writer.js";
import { timestampToIso } from "./timestamps.js";

/**
 * The messages the reflection codec writes by hand (proto-json.ts WELL_KNOWN), written
 * from their bytes: Timestamp as ISO text, Empty, Any as ProtoAny, Identifier as
 * `pkg:Mod:Ent` (noting packages whose signatures are not loaded), and the Daml Value /
 * Record, which only ever reach JSON through a typed path.
 */

type Reader = protobuf.Reader;

export interface LedgerId {
  packageId: string;
  moduleName: string;
  entityName: string;
}

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
export function readIdentifier(r: Reader, end: number): LedgerId {
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
const ANY_UNKNOWN_FIELDS = ascii('"unknownFields":{"fields":{}}');

export function wellKnownPlans(
  signatures: Pick<PackageSignatures, "has">,
  run: TranscodeRun,
): Record<string, TypePlan> {
  return {
    "google.protobuf.Timestamp": { writer: timestampWriter() },
    "google.protobuf.Empty": {
      writer: (r, end, w) => {
        r.pos = end;
        w.bytes(EMPTY_OBJECT);
      },
    },
    "google.protobuf.Any": {
      writer: (r, end, w) => {
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
    },
    "com.daml.ledger.api.v2.Identifier": { writer: identifierWriter(signatures, run) },
    "com.daml.ledger.api.v2.Value": { writer: untypedValue },
    "com.daml.ledger.api.v2.Record": { writer: untypedValue },
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
        text: ascii(JSON.stringify(`${id.packageId}:${id.moduleName}:${id.entityName}`)),
      };
      if (cache.size >= MAX_IDENTIFIERS) cache.clear();
      cache.set(r.buf, start, end, known);
    }
    if (known.packageId !== "" && !signatures.has(known.packageId)) run.missing.push(known.packageId);
    w.bytes(known.text);
    r.pos = end;
  };
}

/** As the object path: every Daml value reaches JSON through a typed path; else a gateway bug. */
function untypedValue(): never {
  throw new Error("a Daml value reached the JSON codec without its type");
}
