/**
 * The codec's public face: what the transports, the ledger client and the gateway's wiring
 * use. Inside: rules/ (the one table of the JSON API's rules, read by both paths), object/
 * (proto-loader objects <-> JSON objects: requests and unary answers), wire/ (protobuf bytes
 * -> JSON text: stream elements). Importers outside src/codec go through here.
 */
export { InvalidJsonError } from "./object/json-path.js";
export { MessageCodec } from "./object/message-codec.js";
export { LedgerJson } from "./object/signature-loading-codec.js";
export type { PackageSignatures } from "./package-signatures.js";
export { isoToTimestamp, type ProtoTimestamp, timestampToIso } from "./rules/timestamps.js";
export { StreamTranscoder, type StreamTranscoderDeps, type Transcode } from "./wire/stream-transcoder.js";
export { MissingPackagesError } from "./wire/transcode-errors.js";
