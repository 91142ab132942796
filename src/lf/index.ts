/** Daml-LF: archives, DARs, type signatures and the typed JSON <-> Value codec. */
export { sha256Hex, unwrapArchive, wrapArchive } from "./archive-decode.js";
export { decodeDar, readDar, writeDar } from "./dar.js";
export { DarError, LfArchiveError, SignatureNotFoundError, ValueCodecError } from "./errors.js";
export {
  type ConstructorShape,
  JsonShapeCompiler,
  type JsonShapeTarget,
  type OptionalForm,
  type RecordFieldShape,
} from "./json-shape-compiler.js";
export { decodeDalf, decodePackage } from "./package-decode.js";
export { encodePackage } from "./package-encode.js";
export { instantiatePackage } from "./package-instantiate.js";
export { formatDate, formatTimestamp } from "./scalar-formats.js";
export * from "./signature-model.js";
export { PackageSignatureIndex, type SignatureResolver, typeConKey } from "./signature-resolver.js";
export { type TypedValueCodec, ValueCodec } from "./value-codec.js";
export type { JsonValue, LedgerIdentifier, LedgerRecord, LedgerValue } from "./value-shapes.js";
