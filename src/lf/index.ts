/** Daml-LF: archives, DARs, type signatures and the typed JSON <-> Value codec. */
export { sha256Hex, type UnwrappedArchive, unwrapArchive, wrapArchive } from "./archive-decode.js";
export {
  type DarContents,
  type DarEntry,
  type DarPackage,
  type DecodedDar,
  decodeDar,
  MANIFEST_PATH,
  readDar,
  writeDar,
} from "./dar.js";
export {
  type ArchiveErrorCode,
  DarError,
  type DarErrorCode,
  LfArchiveError,
  LfEncodeError,
  SignatureNotFoundError,
  ValueCodecError,
} from "./errors.js";
export {
  type ConstructorShape,
  JsonShapeCompiler,
  type JsonShapeTarget,
  type OptionalForm,
  type RecordFieldShape,
} from "./json-shape-compiler.js";
export { formatManifest, parseManifest } from "./manifest.js";
export { decodeDalf, decodePackage } from "./package-decode.js";
export { type EncodedPackage, type EncodeOptions, encodePackage } from "./package-encode.js";
export { instantiatePackage } from "./package-instantiate.js";
export { formatDate, formatTimestamp } from "./scalar-formats.js";
export * from "./signature-model.js";
export { PackageSignatureIndex, type SignatureResolver, typeConKey } from "./signature-resolver.js";
export { type TypedValueCodec, ValueCodec } from "./value-codec.js";
export type {
  JsonValue,
  LedgerIdentifier,
  LedgerMapEntry,
  LedgerRecord,
  LedgerRecordField,
  LedgerValue,
} from "./value-shapes.js";
