import type protobuf from "protobufjs";
import type { TextWriter } from "./text-writer.js";

/**
 * The contract between the stream transcoder's generic compiler and the message types whose
 * JSON is shaped by hand (Daml values, Js* wrappers): what a type plan may change, and the
 * per-transcode state they share.
 */

type Reader = protobuf.Reader;

/** Writes one message's JSON text from its bytes in [r.pos, end); leaves r.pos at end. */
export type MessageWriter = (r: Reader, end: number, w: TextWriter) => void;

/** How one case of a oneof is written when a Js* schema renames it. */
export interface OneofCaseStyle {
  /** The key of the case (the default is the field name in PascalCase). */
  readonly key: string;
  /** Whether the content sits under `value` (the generic rule) or directly under the key. */
  readonly wrapped: boolean;
}

export interface TypePlan {
  /** Cases of the message's (single real) oneof, by field name. */
  readonly oneofCases?: Readonly<Record<string, OneofCaseStyle>>;
  /** The key of an unset oneof (default `Empty`). */
  readonly emptyKey?: string;
  /** The message's JSON is its oneof's object alone (`Event` -> `{"CreatedEvent": {...}}`). */
  readonly flatten?: boolean;
  /** Fields not written by the generic walk (no default either): the tail writes them. */
  readonly skip?: readonly string[];
  /**
   * Extra members after the generic ones, written as `"key":value` pairs joined by commas
   * (nothing for none), read from the message's bytes [start, end) again; must leave r.pos
   * at end.
   */
  readonly tail?: (r: Reader, start: number, end: number, w: TextWriter) => void;
  /** The whole message written by hand (well-known types). */
  readonly writer?: MessageWriter;
}

/** State of one transcode call, shared by every writer of it (transcoding is synchronous). */
export interface TranscodeRun {
  /** Package ids named by identifiers of the message whose signatures are not loaded. */
  readonly missing: string[];
}

/**
 * The message names packages whose signatures are not loaded: the caller loads them
 * (`signatures.ensure(packageIds, token)`) and transcodes the same bytes again.
 */
export class MissingPackagesError extends Error {
  constructor(readonly packageIds: readonly string[]) {
    super(`package signatures not loaded: ${packageIds.join(", ")}`);
    this.name = "MissingPackagesError";
  }
}

/**
 * Valid protobuf the single-pass writer does not reproduce exactly (a repeated field split
 * across the message, two cases of one oneof): the transcoder falls back to the object path.
 * Ledger servers (grpc-java, protobufjs) never write those layouts.
 */
export class WireLayoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WireLayoutError";
  }
}
