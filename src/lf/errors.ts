/**
 * Typed errors of the Daml-LF library. Callers branch on `code` (or on the class), never
 * on message text; the messages are written for the person reading a 400 response or a log.
 */

export type ArchiveErrorCode =
  /** Bytes are not a protobuf Archive / ArchivePayload / Package. */
  | "malformed-archive"
  /** The SHA-256 of the payload is not the archive's `hash`. */
  | "hash-mismatch"
  /** LF 1, an unknown LF 2 minor, or a payload without package. */
  | "unsupported-version"
  /** The package decodes but breaks an LF rule (bad interning index, missing metadata...). */
  | "malformed-package";

/** An error that says what went wrong as a `code` of its own union. */
abstract class CodedError<Code extends string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class LfArchiveError extends CodedError<ArchiveErrorCode> {
  override readonly name = "LfArchiveError";
}

export type DarErrorCode =
  | "not-a-zip"
  | "missing-manifest"
  | "malformed-manifest"
  | "missing-main-dalf"
  | "unsupported-format"
  | "missing-entry"
  | "zip-bomb";

export class DarError extends CodedError<DarErrorCode> {
  override readonly name = "DarError";
}

/** A package definition that cannot be written as a valid archive. */
export class LfEncodeError extends Error {
  override readonly name = "LfEncodeError";
}

/**
 * The signature lookup does not know a type the value needs (the caller may fetch the package).
 * `id` is `<packageId>:<Module>:<Entity>` of the type, template or interface (for a choice: of
 * the template or interface it was looked for on, the choice being `choice`). `cause`: why the
 * package is not there, when loading it failed.
 */
export class SignatureNotFoundError extends Error {
  override readonly name = "SignatureNotFoundError";
  constructor(
    readonly what: "data type" | "template" | "interface" | "choice" | "contract key",
    readonly id: string,
    options: { choice?: string; cause?: unknown } = {},
  ) {
    super(
      `unknown ${what} ${id}${options.choice === undefined ? "" : `:${options.choice}`}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.choice = options.choice;
  }

  readonly choice: string | undefined;

  /** The package id of `id`. */
  get packageId(): string {
    return this.id.slice(0, this.id.indexOf(":"));
  }
}

/**
 * A Daml value that does not match its type. `path` is the JSON path of the fault (rooted at
 * what the caller passed, e.g. `createArguments.shape.value.width`), `detail` the reason;
 * the message is `path: detail`.
 */
export class ValueCodecError extends Error {
  override readonly name = "ValueCodecError";
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path === "" ? detail : `${path}: ${detail}`);
  }
}
