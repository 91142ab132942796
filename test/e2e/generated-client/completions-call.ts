import createClient from "openapi-fetch";
import type { paths } from "./openapi-paths.js";

const PATH = "/v2/commands/command-completions";
type ListOperation = paths[typeof PATH]["post"];

/** What a client generated from the spec makes of one page of completions. */
export interface CompletionsPage {
  status: number;
  /** The command ids of the page's completions, checkpoints left out. */
  commandIds: string[];
  error: unknown;
}

/** A page of completions as asked: GetCompletionsRequest's fields and the list's query parameters. */
export interface CompletionsQuery {
  parties: string[];
  beginExclusive: number;
  limit: number;
  idleMs: number;
}

/**
 * `POST /v2/commands/command-completions` through openapi-fetch's client of the types that
 * openapi-typescript generated from the gateway's document. The path, the body's fields (typed
 * GetCompletionsRequest), the query parameters' names and the answer's elements are spelled here
 * and typed by the document, so the test's type check of this file fails if the operation is gone
 * or its shape changed.
 */
export async function listCompletions(
  baseUrl: string,
  token: string,
  { parties, beginExclusive, limit, idleMs }: CompletionsQuery,
): Promise<CompletionsPage> {
  // JSON answers only: the operation also answers NDJSON and server-sent events, by Accept.
  const client = createClient<paths, "application/json">({
    baseUrl,
    headers: { authorization: `Bearer ${token}` },
  });
  // Typed apart: openapi-fetch's request options let a literal's unknown fields pass, and a
  // renamed field is what the check must catch.
  const query: NonNullable<ListOperation["parameters"]["query"]> = { limit, stream_idle_timeout_ms: idleMs };
  const body: ListOperation["requestBody"]["content"]["application/json"] = { parties, beginExclusive };
  const { data, error, response } = await client.POST(PATH, { params: { query }, body });
  const commandIds: string[] = [];
  for (const { completionResponse } of data ?? []) {
    if (completionResponse !== undefined && "Completion" in completionResponse)
      commandIds.push(completionResponse.Completion.value.commandId);
  }
  return { status: response.status, commandIds, error };
}
