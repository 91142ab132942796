/**
 * Stands in for the types that openapi-typescript generates at test time from the gateway's
 * `/docs/openapi` (test/e2e/generated-client.test.ts), so that the project type-checks without a
 * running gateway. That test compiles completions-call.ts beside the generated types, under this
 * file's name, instead of this file: there the call site is checked; here anything goes.
 */
// biome-ignore lint/suspicious/noExplicitAny: a placeholder for the generated types
export type paths = any;
