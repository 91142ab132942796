import {
  type LedgerJson,
  MissingPackagesError,
  type PackageSignatures,
  StreamTranscoder,
} from "../codec/index.js";
import type { RouteDeps } from "./route-deps.js";

/** The wire path over a route's package cache and value codec: one transcoder per LedgerJson. */
export interface WireCodec {
  readonly transcoder: StreamTranscoder;
  readonly signatures: PackageSignatures;
}

const codecs = new WeakMap<LedgerJson, WireCodec>();

export function wireCodec(deps: RouteDeps): WireCodec {
  const json = deps.json;
  let codec = codecs.get(json);
  if (codec === undefined) {
    const { signatures, values } = json;
    codec = { transcoder: new StreamTranscoder({ root: deps.protos.root, signatures, values }), signatures };
    codecs.set(json, codec);
  }
  return codec;
}

/**
 * A message's JSON text by `toText`; when it names packages not loaded yet, after loading them
 * (a Promise only then: the hot path stays synchronous). A package still missing after that is
 * the transcoder's error.
 */
export function transcodeLoading<T>(
  toText: (bytes: Buffer) => T,
  bytes: Buffer,
  signatures: PackageSignatures,
  token: string | undefined,
): T | Promise<T> {
  try {
    return toText(bytes);
  } catch (error) {
    if (!(error instanceof MissingPackagesError)) throw error;
    return signatures.ensure(error.packageIds, token).then(() => toText(bytes));
  }
}

/** Bytes of `typeName` -> its JSON text, loading the packages it names first when needed. */
export function wireTranscoder(
  deps: RouteDeps,
  typeName: string,
): (bytes: Buffer, token: string | undefined) => string | Promise<string> {
  const { transcoder, signatures } = wireCodec(deps);
  const toText = transcoder.forType(typeName);
  return (bytes, token) => transcodeLoading(toText, bytes, signatures, token);
}
