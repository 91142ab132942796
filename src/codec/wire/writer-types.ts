import type protobuf from "protobufjs";
import type { TextWriter } from "./text-writer.js";

type Reader = protobuf.Reader;

/** Writes one message's JSON text from its bytes in [r.pos, end); leaves r.pos at end. */
export type MessageWriter = (r: Reader, end: number, w: TextWriter) => void;

/**
 * Members written after a message's others, as `"key":value` pairs joined by commas (nothing
 * for none), read from the message's bytes [start, end) again; leaves r.pos at end.
 */
export type TailWriter = (r: Reader, start: number, end: number, w: TextWriter) => void;

/** State of one transcode call, shared by every writer of it (transcoding is synchronous). */
export interface TranscodeRun {
  /** Package ids named by identifiers of the message whose signatures are not loaded. */
  readonly missing: string[];
}
