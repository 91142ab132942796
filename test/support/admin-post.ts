import assert from "node:assert/strict";
import { tokenFor } from "./tokens.js";

/** POSTs `body` as JSON with an admin token (the default user's); fails the test unless 200. */
export async function adminPost(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${tokenFor()}` },
  });
  const answer = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer;
}
