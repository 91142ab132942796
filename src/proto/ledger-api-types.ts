/**
 * The Ledger API's message types as @grpc/proto-loader hands them to JS (PROTO_OPTIONS),
 * generated from protos/ at build (`npm run gen:types`, into src/proto/generated, not
 * committed). `X` is what a call accepts (every field optional); `X__Output` what it gives
 * back (defaults filled in, the set oneof case named). Import message types from here.
 */
export type * from "./generated/index.js";
