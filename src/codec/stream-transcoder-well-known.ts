import type protobuf from "protobufjs";
import type { PackageSignatures } from "./package-signatures.js";
import type { TranscodeRun, TypePlan } from "./stream-transcoder-plan.js";
import { varint64Number } from "./text-json.js";
import { ascii, type TextWriter } from "./text-writer.js";
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

const EMPTY_OBJECT = ascii("{}");
const ANY_TYPE_URL = ascii('"typeUrl":');
const ANY_VALUE = ascii('"value":');
const ANY_UNKNOWN_FIELDS = ascii('"unknownFields":{"fields":{}}');

export function wellKnownPlans(
  signatures: Pick<PackageSignatures, "has">,
  run: TranscodeRun,
): Record<string, TypePlan> {
  return {
    "google.protobuf.Timestamp": {
      writer: (r, end, w) => {
        let seconds = 0;
        let nanos = 0;
        while (r.pos < end) {
          const tag = r.uint32();
          if (tag >>> 3 === 1) seconds = varint64Number(r);
          else if (tag >>> 3 === 2) nanos = r.int32();
          else r.skipType(tag & 7);
        }
        w.raw(`"${timestampToIso({ seconds, nanos })}"`);
      },
    },
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
    "com.daml.ledger.api.v2.Identifier": {
      writer: (r, end, w) => writeIdentifier(r, end, w, signatures, run),
    },
    "com.daml.ledger.api.v2.Value": { writer: untypedValue },
    "com.daml.ledger.api.v2.Record": { writer: untypedValue },
  };
}

/**
 * `"pkg:Mod:Ent"`, the module and entity copied from the wire; a package whose signatures
 * are not loaded is noted (as IdentifierCollector: only a named package needs them).
 */
function writeIdentifier(
  r: Reader,
  end: number,
  w: TextWriter,
  signatures: Pick<PackageSignatures, "has">,
  run: TranscodeRun,
): void {
  let packageId = "";
  let moduleAt = -1;
  let entityAt = -1;
  while (r.pos < end) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1) packageId = r.string();
    else if (field === 2 || field === 3) {
      if (field === 2) moduleAt = r.pos;
      else entityAt = r.pos;
      r.skipType(tag & 7);
    } else r.skipType(tag & 7);
  }
  if (packageId !== "" && !signatures.has(packageId)) run.missing.push(packageId);
  const part = (at: number) => {
    if (at < 0) return "";
    r.pos = at;
    return r.string();
  };
  w.string(`${packageId}:${part(moduleAt)}:${part(entityAt)}`);
  r.pos = end;
}

/** As the object path: every Daml value reaches JSON through a typed path; else a gateway bug. */
function untypedValue(): never {
  throw new Error("a Daml value reached the JSON codec without its type");
}
