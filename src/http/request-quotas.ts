import type { Route } from "../endpoints/route.js";
import { quotaExceededError } from "../errors/index.js";
import type { ClientQuotas, QuotaClaim } from "../limits/client-quotas.js";
import type { BodyReader } from "./body-reader.js";

/** The command submissions: their user's token bucket (limits.commands-per-second-per-user). */
const COMMAND_SUBMISSION = /^\/v2\/(?:commands\/(?!completions$)|interactive-submission\/execute)/;

/**
 * Takes a request's share of its user's caps before its body is read: a slot in flight, a stream
 * for a streamed list twin, a token for a command submission. Answers the release, to be called
 * once the exchange settles, whichever way it ends; a refusal throws its 429 and holds nothing.
 */
export function holdRequestQuotas(user: string, route: Route, quotas: ClientQuotas): () => void {
  const claims: QuotaClaim[] = [{ cap: "http-in-flight-per-user", who: user }];
  if (route.response.kind === "json-array" && route.response.streamed === true)
    claims.push({ cap: "streams-per-user", who: user });
  const hold = quotas.hold(claims);
  if (hold.refusal !== undefined) throw quotaExceededError(hold.refusal);
  if (COMMAND_SUBMISSION.test(route.path)) {
    const refusal = quotas.command(user);
    if (refusal !== undefined) {
      hold.release();
      throw quotaExceededError(refusal);
    }
  }
  return hold.release;
}

/**
 * A client past a cap is asked to come back, usually on the same connection: a small body
 * (a command's) is read and dropped, so that the 429 keeps the connection open. Otherwise each
 * refusal would cost the client, and the gateway, a new connection: under a flood that was
 * most of what refusing cost (bench/rig/scenarios/fairness.ts). A larger body is not read.
 */
const REFUSED_BODY_READ_BYTES = 16 * 1024;

export async function readRefusedBody(body: BodyReader | undefined): Promise<void> {
  const declared = body?.declaredBytes;
  if (body === undefined || body.done || declared === undefined || declared > REFUSED_BODY_READ_BYTES) return;
  // A body that does not come (timeout, client gone) leaves the connection to close as before.
  await body.read().catch(() => undefined);
}
