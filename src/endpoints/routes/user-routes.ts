import { invalidArgumentError } from "../../errors/index.js";
import type { UpdateUserRequest } from "../../proto/ledger-api-types.js";
import { grpcRoute } from "../grpc-route.js";
import type { RequestContext, Route } from "../route.js";
import type { RouteDeps } from "../route-deps.js";

const SERVICE = "admin.UserManagementService";
const TAG = "User Management Service";
const USER_ID = [{ name: "user-id", type: "string" as const }];
const USER_ID_PATTERN = /^[a-zA-Z0-9@^$.!`\-#+'~_|:()]{1,128}$/;

/**
 * The user endpoints. As Canton's JsUserManagementService: the path's user id fills GET/DELETE
 * requests (a malformed one is INVALID_ARGUMENT before any gRPC call), and for bodies that
 * carry a user id too, the two must match.
 */
export function userRoutes(deps: RouteDeps): Route[] {
  return [
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/users",
      summary: "List all users",
      tag: TAG,
      service: SERVICE,
      rpc: "ListUsers",
      query: [
        { name: "pageSize", type: "int32" },
        { name: "pageToken", type: "string" },
      ],
      responseSchema: "ListUsersResponse",
      pages: { items: "users", itemSchema: "User" },
      toRequest: ({ query }) => ({
        pageSize: query.pageSize ?? 0,
        pageToken: query.pageToken ?? "",
        identityProviderId: "",
      }),
    }),
    grpcRoute(deps, {
      method: "POST",
      path: "/v2/users",
      summary: "Create a user",
      tag: TAG,
      service: SERVICE,
      rpc: "CreateUser",
      body: { kind: "json", schema: "CreateUserRequest" },
      responseSchema: "CreateUserResponse",
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/users/{user-id}",
      summary: "Get a user",
      tag: TAG,
      service: SERVICE,
      rpc: "GetUser",
      pathParams: USER_ID,
      query: [{ name: "identity-provider-id", type: "string" }],
      responseSchema: "GetUserResponse",
      toRequest: ({ path, query }) => ({
        userId: wellFormedUserId(path),
        identityProviderId: query["identity-provider-id"] ?? "",
      }),
    }),
    grpcRoute<UpdateUserRequest>(deps, {
      method: "PATCH",
      path: "/v2/users/{user-id}",
      summary: "Update a user",
      tag: TAG,
      service: SERVICE,
      rpc: "UpdateUser",
      pathParams: USER_ID,
      body: { kind: "json", schema: "UpdateUserRequest" },
      responseSchema: "UpdateUserResponse",
      toRequest: async ({ path, body }, fromJson) => {
        const request = await fromJson(body);
        const inBody = request.user?.id;
        if (inBody !== path["user-id"]) throw unmatchedUserId(path, inBody);
        return request;
      },
    }),
    {
      // Canton answers `{}` (its schema is a bare object), not a DeleteUserResponse.
      ...grpcRoute(deps, {
        method: "DELETE",
        path: "/v2/users/{user-id}",
        summary: "Delete a user",
        tag: TAG,
        service: SERVICE,
        rpc: "DeleteUser",
        pathParams: USER_ID,
        responseSchema: "DeleteIdentityProviderConfigResponse",
        toRequest: ({ path }) => ({ userId: wellFormedUserId(path), identityProviderId: "" }),
      }),
      response: { kind: "empty" },
    },
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/authenticated-user",
      summary: "Get the user of the token",
      tag: TAG,
      service: SERVICE,
      rpc: "GetUser",
      query: [{ name: "identity-provider-id", type: "string" }],
      responseSchema: "GetUserResponse",
      // An empty user id lets the ledger answer for the token's own user.
      toRequest: ({ query }) => ({ userId: "", identityProviderId: query["identity-provider-id"] ?? "" }),
    }),
    grpcRoute(deps, {
      method: "GET",
      path: "/v2/users/{user-id}/rights",
      summary: "List the rights of a user",
      tag: TAG,
      service: SERVICE,
      rpc: "ListUserRights",
      pathParams: USER_ID,
      responseSchema: "ListUserRightsResponse",
      toRequest: ({ path }) => ({ userId: wellFormedUserId(path), identityProviderId: "" }),
    }),
    rightsRoute(deps, "POST", "GrantUserRights", "Grant rights to a user", "GrantUserRights"),
    rightsRoute(deps, "PATCH", "RevokeUserRights", "Revoke rights from a user", "RevokeUserRights"),
    grpcRoute(deps, {
      method: "PATCH",
      path: "/v2/users/{user-id}/identity-provider-id",
      summary: "Move a user to another identity provider",
      tag: TAG,
      service: SERVICE,
      rpc: "UpdateUserIdentityProviderId",
      pathParams: USER_ID,
      body: { kind: "json", schema: "UpdateUserIdentityProviderIdRequest" },
      responseSchema: "UpdateUserIdentityProviderIdResponse",
      toRequest: bodyUserIdMustMatch,
    }),
  ];
}

function rightsRoute(
  deps: RouteDeps,
  method: "POST" | "PATCH",
  rpc: string,
  summary: string,
  schemaPrefix: string,
): Route {
  return grpcRoute(deps, {
    method,
    path: "/v2/users/{user-id}/rights",
    summary,
    tag: TAG,
    service: SERVICE,
    rpc,
    pathParams: USER_ID,
    body: { kind: "json", schema: `${schemaPrefix}Request` },
    responseSchema: `${schemaPrefix}Response`,
    toRequest: bodyUserIdMustMatch,
  });
}

/** For the requests that name their user at the root: GrantUserRights, RevokeUserRights, UpdateUserIdentityProviderId. */
async function bodyUserIdMustMatch<Req extends { userId?: string }>(
  { path, body }: RequestContext,
  fromJson: (json: unknown) => Promise<Req>,
): Promise<Req> {
  const request = await fromJson(body);
  if (request.userId !== path["user-id"]) throw unmatchedUserId(path, request.userId);
  return request;
}

function wellFormedUserId(path: Readonly<Record<string, string>>): string {
  const id = path["user-id"] ?? "";
  if (!USER_ID_PATTERN.test(id)) {
    throw invalidArgumentError(
      `Malformed user-id: ${id === "" ? "User ID is empty" : `User ID "${id}" does not match regex "${USER_ID_PATTERN.source.slice(1, -1)}"`}`,
    );
  }
  return id;
}

/** Canton prints the body's user id as a Scala Option. */
function unmatchedUserId(path: Readonly<Record<string, string>>, inBody: string | undefined) {
  const shown = inBody === undefined ? "None" : `Some(${inBody})`;
  return invalidArgumentError(`${path["user-id"]} does not match user in body: ${shown} `);
}
