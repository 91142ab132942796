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
