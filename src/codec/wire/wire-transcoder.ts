import protobuf from "protobufjs";
import type { ValueCodec } from "../../lf/index.js";
import { IdentifierCollector } from "../object/identifier-collector.js";
import { MessageCodec } from "../object/message-codec.js";
import type { PackageSignatures } from "../package-signatures.js";
import { typeNameOf } from "../rules/message-layout.js";
import { DamlFieldWriters, DECODED_OBJECT } from "./daml-field-writers.js";
import { MessageWriters } from "./message-writers.js";
import { TextWriter } from "./text-writer.js";
import { MissingPackagesError, WireLayoutError } from "./transcode-errors.js";
import { wellKnownWriters } from "./well-known-writers.js";
import type { TranscodeRun } from "./writer-types.js";

/**
 * The wire path: answers and stream elements from their protobuf bytes straight to the JSON
 * text the object path (`MessageCodec.toJson` + `JSON.stringify` of the proto-loader object)
 * writes, without the decoded object or the JSON object in between: on the update stream those two
 * layers and the garbage they leave were most of the gateway's CPU. Both paths read the same
 * rules (rules/); the rare wire layouts the single pass does not reproduce go to the object
 * path.
 *
 * @example
 * const transcoder = new WireTranscoder({ root, signatures, values });
 * const toText = transcoder.forType("com.daml.ledger.api.v2.GetUpdatesResponse");
 * try { frame = toText(bytes) } catch (e) { if (e instanceof MissingPackagesError) ... }
 * (the gateway goes through LedgerJson.wireText, which loads the missing packages and retries)
 */
export interface WireTranscoderDeps {
  readonly root: protobuf.Root;
  /**
   * Whether a package's signatures are loaded (the transcoder never loads them itself), and
   * the data types the value writers are compiled from.
   */
  readonly signatures: Pick<PackageSignatures, "has" | "resolveDataType">;
  /** The value codec over those signatures (the cache's own, so eviction clears it). */
  readonly values: ValueCodec;
}

/** bytes -> JSON text; throws MissingPackagesError when signatures must be loaded first. */
export type Transcode = (bytes: Uint8Array) => string;

export class WireTranscoder {
  private readonly run: TranscodeRun = { missing: [] };
  private readonly out = new TextWriter();
  private readonly writers: MessageWriters;
  private readonly objectCodec: MessageCodec;
  private readonly identifiers: IdentifierCollector;
  private readonly damlFields: DamlFieldWriters;

  constructor(private readonly deps: WireTranscoderDeps) {
    this.damlFields = new DamlFieldWriters(deps.root, deps.values, deps.signatures, this.run);
    this.writers = new MessageWriters({
      wellKnown: wellKnownWriters(deps.signatures, this.run),
      damlTail: (layout) => this.damlFields.tail(layout),
    });
    this.objectCodec = new MessageCodec(deps.root, deps.values);
    this.identifiers = new IdentifierCollector(deps.root);
  }

  /** Daml values written through the object path so far (off the wire writers' path). */
  get valueFallbacks(): number {
    return this.damlFields.fallbacks;
  }

  /** The transcoder of one message type (compiled now, reused for every element). */
  forType(typeName: string): Transcode {
    const type = this.deps.root.lookupType(typeName);
    const writer = this.writers.writer(type);
    const run = this.run;
    const out = this.out;
    return (bytes) => {
      const buffer = Buffer.isBuffer(bytes)
        ? bytes
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
      run.missing.length = 0;
      out.reset();
      try {
        writer(protobuf.Reader.create(buffer), buffer.length, out);
      } catch (error) {
        if (error instanceof WireLayoutError) return this.objectPath(type, buffer);
        throw error;
      }
      if (run.missing.length > 0) throw new MissingPackagesError([...new Set(run.missing)]);
      return out.text();
    };
  }

  /** The reference path, for the rare wire layouts the single pass does not reproduce. */
  private objectPath(type: protobuf.Type, bytes: Buffer): string {
    const typeName = typeNameOf(type);
    const object = type.toObject(type.decode(bytes), DECODED_OBJECT);
    const missing = [...this.identifiers.packageIds(typeName, object)].filter(
      (id) => !this.deps.signatures.has(id),
    );
    if (missing.length > 0) throw new MissingPackagesError(missing);
    return JSON.stringify(this.objectCodec.toJson(typeName, object));
  }
}
