/**
 * Canton's JSON API answer to a request none of its routes takes (its EndpointsCompanion.notFound,
 * the last of its routes): 404 with the HTTP JSON API's own error object, not a JsCantonError,
 * naming the method as pekko-http prints it and the request's absolute URI, e.g.
 * `{"errors":["HttpMethod(GET), uri: http://localhost:7575/v2/updates/flats"],"status":404}`.
 * The gateway answers so an operation of another Canton release than the one it serves (a path
 * the participant's Canton would not know), as a client of that release sees it.
 */
interface UnknownPathAnswer {
  readonly status: 404;
  readonly body: { readonly errors: readonly string[]; readonly status: 404 };
}

export function unknownPathAnswer(
  method: string,
  host: string,
  url: string,
  query: string,
): UnknownPathAnswer {
  const uri = `http://${host}${url}${query === "" ? "" : `?${query}`}`;
  return { status: 404, body: { errors: [`HttpMethod(${method}), uri: ${uri}`], status: 404 } };
}
