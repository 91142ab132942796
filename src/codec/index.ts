/**
 * The codec's public face: what the transports, the ledger client and the gateway's wiring
 * use, LedgerJson first. Inside: rules/ (the one table of the JSON API's rules, read by both
 * paths), object/ (proto-loader objects <-> JSON objects: requests, reshaped answers), wire/
 * (protobuf bytes -> JSON text: answers and stream elements). Importers outside src/codec go
 * through here.
 */

export { LedgerJson } from "./ledger-json.js";
export { InvalidJsonError } from "./object/json-path.js";
export { MessageCodec } from "./object/message-codec.js";
export type { PackageSignatures } from "./package-signatures.js";
export { isoToTimestamp } from "./rules/timestamps.js";
export { MissingPackagesError } from "./wire/transcode-errors.js";
export { WireTranscoder } from "./wire/wire-transcoder.js";
