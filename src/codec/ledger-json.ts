import type protobuf from "protobufjs";
import { SignatureNotFoundError, ValueCodec } from "../lf/index.js";
import { commandTemplateRefs } from "./object/command-refs.js";
import type { CommandContext } from "./object/daml-fields.js";
import { IdentifierCollector } from "./object/identifier-collector.js";
import { MessageCodec } from "./object/message-codec.js";
import type { PackageSignatures } from "./package-signatures.js";
import { LastTranscoded, offsetReader } from "./wire/element-position.js";
import { MissingPackagesError } from "./wire/transcode-errors.js";
import { WireTranscoder } from "./wire/wire-transcoder.js";

/**
 * A message's wire bytes -> its JSON text. A Promise only when the message names packages not
 * loaded yet (then loaded with `token`): the hot path stays synchronous.
 */
type WireText = (bytes: Buffer, token: string | undefined) => string | Promise<string>;

/** Commands that name packages by id: each is what goes to the ledger. */
const PACKAGE_IDS_AS_GIVEN: CommandContext = { packageIdOf: (ref) => ref };

/**
 * The codec as the gateway uses it: both paths with the async step each needs first (load the
 * signatures of the packages a message names; resolve `#package-name` references of commands).
 * Requests go through the object path (fromJson); answers and stream elements through the wire
 * path (wireText), or the object path where a route reshapes the answer's object (toJson).
 */
export class LedgerJson {
  readonly codec: MessageCodec;
  private readonly identifiers: IdentifierCollector;
  /** Built on first use: tests and tools of the object path alone never compile its writers. */
  private wire: WireTranscoder | undefined;
  /**
   * The stream element wireText transcoded last, whose offset is read from its bytes when the
   * fan-out asks for it (src/endpoints/stream-position.ts) instead of from its text.
   */
  readonly transcoded = new LastTranscoded();

  /**
   * `values` defaults to a codec over `signatures`; pass the cache's own so eviction clears it.
   * Both are public for tools that build a WireTranscoder of their own over the same cache.
   */
  constructor(
    private readonly root: protobuf.Root,
    readonly signatures: PackageSignatures,
    readonly values: ValueCodec = new ValueCodec(signatures),
  ) {
    this.codec = new MessageCodec(root, values);
    this.identifiers = new IdentifierCollector(root);
  }

  /** The packages a message needs that are not loaded yet (empty on the hot path). */
  missingPackages(typeName: string, message: unknown): string[] {
    const missing: string[] = [];
    for (const id of this.identifiers.packageIds(typeName, message))
      if (!this.signatures.has(id)) missing.push(id);
    return missing;
  }

  /** JSON of a message from the ledger, loading package signatures first when needed. */
  async toJson(typeName: string, message: unknown, token: string | undefined): Promise<unknown> {
    const missing = this.missingPackages(typeName, message);
    if (missing.length > 0) await this.signatures.ensure(missing, token);
    return this.codec.toJson(typeName, message);
  }

  /** Like toJson when nothing is missing, without a Promise: for stream elements. */
  toJsonNow(typeName: string, message: unknown): unknown {
    return this.codec.toJson(typeName, message);
  }

  /**
   * The wire path of `typeName`, compiled now and reused for every message. A package still
   * missing after loading is the transcoder's error.
   */
  wireText(typeName: string): WireText {
    const { root, signatures, values } = this;
    this.wire ??= new WireTranscoder({ root, signatures, values });
    const toText = this.wire.forType(typeName);
    const offsets = offsetReader(root.lookupType(typeName));
    if (offsets === undefined) return (bytes, token) => this.transcode(toText, bytes, token);
    const transcoded = this.transcoded;
    const remembered = (text: string, bytes: Buffer) => {
      transcoded.set(text, bytes, offsets);
      return text;
    };
    return (bytes, token) => {
      const text = this.transcode(toText, bytes, token);
      return typeof text === "string"
        ? remembered(text, bytes)
        : text.then((done) => remembered(done, bytes));
    };
  }

  private transcode(
    toText: (bytes: Buffer) => string,
    bytes: Buffer,
    token: string | undefined,
  ): string | Promise<string> {
    try {
      return toText(bytes);
    } catch (error) {
      if (!(error instanceof MissingPackagesError)) throw error;
      return this.signatures.ensure(error.packageIds, token).then(() => toText(bytes));
    }
  }

  /**
   * A request from JSON. Commands (`commands`, at the root, under `commands`, or inlined as in
   * PrepareSubmissionRequest) get their `#package-name` references resolved for the first actAs
   * party and their signatures loaded; the `#name` form itself is what goes to the ledger.
   */
  async fromJson(typeName: string, json: unknown, token: string | undefined): Promise<unknown> {
    const body = json as { commands?: unknown; actAs?: unknown } | null;
    // PrepareSubmissionRequest carries the Commands fields (commands, actAs) at its root.
    const inline = typeName.endsWith(".Commands") || Array.isArray(body?.commands);
    const commands = inline ? body : (body?.commands as typeof body);
    const refs = commandTemplateRefs(commands);
    if (refs.length === 0) return this.codec.fromJson(typeName, json);
    const party =
      Array.isArray(commands?.actAs) && typeof commands.actAs[0] === "string" ? commands.actAs[0] : "";
    // The hot path: every reference resolved and its package held already: nothing to wait for.
    const now = this.resolvedNow(refs, party);
    if (now !== undefined) return this.codec.fromJson(typeName, json, "", now);
    const resolved = new Map<string, string>();
    await Promise.all(
      [...new Set(refs)].map(async (ref) => {
        resolved.set(
          ref,
          ref.startsWith("#") ? await this.signatures.resolvePackageName(ref.slice(1), party, token) : ref,
        );
      }),
    );
    // A package the ledger cannot give is not an error yet: the command naming it is, with the
    // id it names (Canton's TEMPLATES_OR_INTERFACES_NOT_FOUND), the load failure as its cause.
    const failures = new Map<string, unknown>();
    const unloaded = [...new Set(resolved.values())].filter((id) => !this.signatures.has(id));
    // The hot path: every package held already, nothing to wait for.
    if (unloaded.length > 0) {
      await Promise.all(
        unloaded.map((id) =>
          this.signatures.ensure([id], token).catch((error: unknown) => {
            failures.set(id, error);
          }),
        ),
      );
    }
    const context: CommandContext = { packageIdOf: (ref) => resolved.get(ref) ?? ref };
    try {
      return this.codec.fromJson(typeName, json, "", context);
    } catch (error) {
      if (failures.size === 0 || !(error instanceof SignatureNotFoundError)) throw error;
      if (failures.has(error.packageId)) {
        throw new SignatureNotFoundError(error.what, error.id, {
          ...(error.choice === undefined ? {} : { choice: error.choice }),
          cause: failures.get(error.packageId),
        });
      }
      // A type of a package that failed to load as a dependency: that failure is the answer.
      throw failures.values().next().value;
    }
  }

  /**
   * The references' package ids when each is known without asking the ledger (an id, or a
   * `#name` whose preference is held) and its package is loaded; else undefined.
   */
  private resolvedNow(refs: readonly string[], party: string): CommandContext | undefined {
    let names: Map<string, string> | undefined;
    for (const ref of refs) {
      const id = ref.startsWith("#") ? this.signatures.preferredPackageNow?.(ref.slice(1), party) : ref;
      if (id === undefined || !this.signatures.has(id)) return undefined;
      if (id === ref) continue;
      names ??= new Map();
      names.set(ref, id);
    }
    if (names === undefined) return PACKAGE_IDS_AS_GIVEN;
    const resolved = names;
    return { packageIdOf: (ref) => resolved.get(ref) ?? ref };
  }
}
