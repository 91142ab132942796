import { Observable } from "rxjs";
import type { Availability } from "../proto/api-version.js";
import { operationId } from "./operation-id.js";
import type {
  Answer,
  BodySpec,
  HttpMethod,
  ParamSpec,
  RequestContext,
  Route,
  StreamedAnswer,
} from "./route.js";
import type { RouteDeps } from "./route-deps.js";
import { type StreamFormat, streamFormatOf } from "./stream-format.js";

/** `Req`: the gRPC request in proto-loader's input shape (`X` from src/proto/ledger-api-types.ts). */
export interface GrpcRouteSpec<Req extends object = object> {
  method: HttpMethod;
  path: string;
  summary: string;
  tag: string;
  /** Relative to com.daml.ledger.api.v2, e.g. `admin.PartyManagementService`. */
  service: string;
  rpc: string;
  pathParams?: ParamSpec[];
  query?: ParamSpec[];
  /** JSON body schema; by default the body is the gRPC request itself. */
  body?: BodySpec;
  /** Component schema of the answer (for the docs). */
  responseSchema: string;
  /** Builds the gRPC request; default: the body through the codec. */
  toRequest?: (ctx: RequestContext, fromJson: (json: unknown) => Promise<Req>) => Req | Promise<Req>;
  /** Reshapes the JSON of the gRPC response (legacy shapes such as transaction trees). */
  toAnswer?: (json: unknown) => unknown;
  deprecated?: boolean;
  /** The Canton releases that have the operation; absent: every known one. */
  availability?: Availability;
  /** Canton's operation id where its spec overrides the one made from method and path. */
  operationId?: string;
  /** `optional`: served without a token too (Route.auth); `token` when absent. */
  auth?: "optional";
  /**
   * A paged answer: `items`, the JSON field of a page's elements (of component schema
   * `itemSchema`), and `nextPageToken` the next page's token, "" on the last. A client whose
   * Accept prefers NDJSON or server-sent events gets every element of every page from the one it
   * asked for on, streamed page after page.
   */
  pages?: { items: string; itemSchema: string };
}

/**
 * A route that is one unary gRPC call: JSON body/params -> request -> call with the caller's
 * token -> response -> JSON, through the ledger JSON codec (which loads the package
 * signatures that Daml values need). The answer goes from the response's bytes straight to its
 * JSON text (the wire path streams use), without the decoded object, its JSON object and their
 * garbage; a route that reshapes the answer (`toAnswer`) works on the JSON object instead.
 */
export function grpcRoute<Req extends object = object>(deps: RouteDeps, spec: GrpcRouteSpec<Req>): Route {
  const { requestTypeName: requestType, responseTypeName: responseType } = deps.protos.method(
    spec.service,
    spec.rpc,
  );
  const toRequest =
    spec.toRequest ??
    ((ctx: RequestContext, fromJson: (json: unknown) => Promise<Req>) => fromJson(ctx.body));
  const { toAnswer } = spec;
  const answerText = toAnswer === undefined ? deps.json.wireText(responseType) : undefined;
  return {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId ?? operationId(spec.method, spec.path),
    summary: spec.summary,
    tag: spec.tag,
    ...(spec.pathParams ? { pathParams: spec.pathParams } : {}),
    ...(spec.query ? { query: spec.query } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    ...(spec.deprecated ? { deprecated: true } : {}),
    ...(spec.availability ? { availability: spec.availability } : {}),
    response: {
      kind: "json",
      schema: spec.responseSchema,
      ...(spec.pages ? { streamedItems: spec.pages.itemSchema } : {}),
    },
    auth: spec.auth ?? "token",
    ...(spec.pages ? { headers: ["accept"] } : {}),
    handle: async (ctx): Promise<Answer> => {
      // The codec builds the message of `requestType`, which is what `Req` names.
      const fromJson = (json: unknown) =>
        deps.json.fromJson(requestType, json ?? {}, ctx.token) as Promise<Req>;
      const request = await toRequest(ctx, fromJson);
      const format = spec.pages ? streamFormatOf(ctx.headers.accept ?? "") : undefined;
      if (spec.pages && format !== undefined) {
        const page = async (token: string | undefined): Promise<Record<string, unknown>> => {
          const pageRequest = token === undefined ? request : { ...request, pageToken: token };
          const response = await deps.ledger.unary(spec.service, spec.rpc, pageRequest, ctx.token, {
            trace: ctx.trace,
          });
          return (await deps.json.toJson(responseType, response, ctx.token)) as Record<string, unknown>;
        };
        return pagesStreamed(format, spec.pages.items, page);
      }
      if (answerText) {
        const bytes = await deps.ledger.unary(spec.service, spec.rpc, request, ctx.token, {
          rawResponse: true,
          trace: ctx.trace,
        });
        return { kind: "text", contentType: "application/json", text: await answerText(bytes, ctx.token) };
      }
      const response = await deps.ledger.unary(spec.service, spec.rpc, request, ctx.token, {
        trace: ctx.trace,
      });
      // Without a package to load first (the hot path), the answer is written without a Promise.
      const json =
        deps.json.missingPackages(responseType, response).length === 0
          ? deps.json.toJsonNow(responseType, response)
          : await deps.json.toJson(responseType, response, ctx.token);
      return { kind: "json", body: toAnswer ? toAnswer(json) : json };
    },
  };
}

/**
 * Every element of every page, from the first page asked for on: the next page is asked only
 * when the client takes more (demand), and once the last has no next page token, the stream ends.
 */
function pagesStreamed(
  format: StreamFormat,
  items: string,
  page: (token: string | undefined) => Promise<Record<string, unknown>>,
): StreamedAnswer {
  return {
    kind: "stream",
    format,
    elements: (demand$) =>
      new Observable<string>((subscriber) => {
        let ready = true;
        let resume: (() => void) | undefined;
        const demand = demand$.subscribe({
          next: (next) => {
            ready = next;
            if (next) resume?.();
          },
        });
        const walk = async (): Promise<void> => {
          let token: string | undefined;
          do {
            while (!ready && !subscriber.closed) await new Promise<void>((resolve) => (resume = resolve));
            if (subscriber.closed) return;
            const answer = await page(token);
            for (const item of (answer[items] as unknown[] | undefined) ?? [])
              subscriber.next(JSON.stringify(item));
            token = typeof answer.nextPageToken === "string" ? answer.nextPageToken : "";
          } while (token !== "" && !subscriber.closed);
          subscriber.complete();
        };
        walk().catch((error: unknown) => subscriber.error(error));
        return () => {
          demand.unsubscribe();
          resume?.();
        };
      }),
  };
}
