/**
 * First step of reading a .dalf: unwrap the Archive envelope, verify the package id and
 * pick the LF 2 package bytes out of the payload.
 */
import { createHash } from "node:crypto";
import { archiveSchema } from "./archive-proto.js";
import { LfArchiveError } from "./errors.js";
import type { WArchive, WArchivePayload } from "./lf2-wire.js";
import type { LfVersion } from "./signature-model.js";

export interface UnwrappedArchive {
  /** Verified: lowercase hex SHA-256 of the payload bytes. */
  readonly packageId: string;
  readonly lfVersion: LfVersion;
  /** The Archive's payload: what a participant serves for GetPackage (its SHA-256 is the id). */
  readonly payload: Uint8Array;
  /** Serialized daml_lf_2.Package. */
  readonly packageBytes: Uint8Array;
}

const MINOR_TO_VERSION: Readonly<Record<string, LfVersion>> = {
  "1": "2.1",
  "2": "2.2",
  "3": "2.3",
  dev: "2.dev",
};

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function decodeMessage<T>(decode: () => unknown, what: string): T {
  try {
    return decode() as T;
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new LfArchiveError("malformed-archive", `not a Daml-LF ${what}: ${reason}`, { cause });
  }
}

export function unwrapArchive(bytes: Uint8Array): UnwrappedArchive {
  const schema = archiveSchema();
  const archive = decodeMessage<WArchive>(() => schema.Archive.decode(bytes), "archive");
  const payload = archive.payload;
  if (payload === undefined || payload.length === 0) {
    throw new LfArchiveError("malformed-archive", "not a Daml-LF archive: it has no payload");
  }
  if ((archive.hashFunction ?? 0) !== 0) {
    throw new LfArchiveError("malformed-archive", `unknown archive hash function ${archive.hashFunction}`);
  }
  const packageId = sha256Hex(payload);
  if (archive.hash !== packageId) {
    throw new LfArchiveError(
      "hash-mismatch",
      `archive hash ${JSON.stringify(archive.hash ?? "")} does not match the SHA-256 of its payload (${packageId})`,
    );
  }
  const body = decodeMessage<WArchivePayload>(() => schema.ArchivePayload.decode(payload), "archive payload");
  if (body.Sum === "damlLf_1") {
    throw new LfArchiveError(
      "unsupported-version",
      `package ${packageId} is Daml-LF 1, only LF 2 is supported`,
    );
  }
  if (body.Sum !== "damlLf_2" || !body.damlLf_2) {
    throw new LfArchiveError(
      "unsupported-version",
      `package ${packageId}: archive payload holds no LF 2 package`,
    );
  }
  const lfVersion = MINOR_TO_VERSION[body.minor ?? ""];
  if (lfVersion === undefined) {
    throw new LfArchiveError(
      "unsupported-version",
      `package ${packageId}: unsupported Daml-LF version 2.${body.minor ?? "?"}`,
    );
  }
  return { packageId, lfVersion, payload, packageBytes: body.damlLf_2 };
}

/** A .dalf (serialized Archive) from the parts GetPackage answers with: payload and hash. */
export function wrapArchive(payload: Uint8Array, hash: string): Uint8Array {
  return archiveSchema().Archive.encode({ payload, hash }).finish();
}
