/**
 * The codec's public face: what the transports, the ledger client and the gateway's wiring
 * use. Files inside src/codec may move; importers outside it go through here.
 */
export { InvalidJsonError } from "./json-path.js";
export { LedgerJson } from "./ledger-json.js";
export type { PackageSignatures } from "./package-signatures.js";
export { MissingPackagesError, StreamTranscoder, type Transcode } from "./stream-transcoder.js";
export { isoToTimestamp, type ProtoTimestamp, timestampToIso } from "./timestamps.js";
