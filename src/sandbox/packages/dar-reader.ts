/**
 * Turns uploaded DAR bytes into the packages the store keeps, or into Canton's error for a
 * broken upload: an unreadable zip or manifest is INVALID_DAR, an entry that is not a valid
 * Daml-LF 2 archive is DAR_PARSE_ERROR, one that would inflate past the bound ZIP_BOMB (all
 * INVALID_ARGUMENT), never an unexpected failure.
 */
import {
  DarError,
  decodePackage,
  LfArchiveError,
  type PackageSignature,
  readDar,
  unwrapArchive,
} from "../../lf/index.js";
import { packageErrors } from "./package-errors.js";

/** One package as the participant stores it. */
export interface ArchivedPackage {
  readonly packageId: string;
  readonly name: string;
  readonly version: string;
  /**
   * Archive.payload: what GetPackage serves as `archive_payload` and what the JSON API sends as
   * the download body. Its SHA-256 is the package id.
   */
  readonly payload: Uint8Array;
  /** The whole .dalf (serialized Archive), for the package size Canton reports. */
  readonly archiveSize: number;
  readonly signature: PackageSignature;
}

export interface UploadedDar {
  readonly mainPackageId: string;
  /** Main package first, then the dependencies in manifest order. */
  readonly packages: readonly ArchivedPackage[];
}

export function readUploadedDar(bytes: Uint8Array): UploadedDar {
  let contents: ReturnType<typeof readDar>;
  try {
    contents = readDar(bytes);
  } catch (error) {
    if (error instanceof DarError && error.code === "zip-bomb") throw packageErrors.zipBomb(error.message);
    if (error instanceof DarError) throw packageErrors.invalidDar(error.message);
    throw error;
  }
  const packages = [contents.main, ...contents.dependencies].map((entry) =>
    archivedPackage(entry.path, entry.bytes),
  );
  return { mainPackageId: packages[0]!.packageId, packages };
}

export function archivedPackage(path: string, dalf: Uint8Array): ArchivedPackage {
  let signature: PackageSignature;
  let payload: Uint8Array;
  try {
    const unwrapped = unwrapArchive(dalf);
    payload = unwrapped.payload;
    signature = decodePackage(unwrapped);
  } catch (error) {
    if (error instanceof LfArchiveError) throw packageErrors.darParseError(`${path}: ${error.message}`);
    throw error;
  }
  return {
    packageId: signature.packageId,
    name: signature.name,
    version: signature.version,
    payload,
    archiveSize: dalf.byteLength,
    signature,
  };
}
