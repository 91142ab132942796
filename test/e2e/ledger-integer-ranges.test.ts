import { strictEqual } from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Stack, startStack } from "../support/stack.js";
import { acsDeltaFormat } from "../support/update-requests.js";
import { allocate, call, userFor, wildcard } from "./ledger-client.js";

/**
 * Integers outside their protobuf field's type are refused as malformed bodies, 400 `Invalid
 * value for: body`, as Canton's JSON decoder refuses them, instead of reaching the ledger
 * wrapped (2^64 became offset 384; a maxPageSize of 3e9 a negative number).
 */
describe("integer request fields are checked against their protobuf type", () => {
  let stack: Stack;
  let party: string;
  let reader: string;
  before(async () => {
    stack = await startStack();
    party = await allocate(stack, "ranges");
    reader = await userFor(stack, "ranges-reader", [], [party]);
  });
  after(() => stack.stop());

  const page = (fields: Record<string, unknown>) => ({
    updateFormat: acsDeltaFormat(wildcard([party])),
    ...fields,
  });

  it("refuses an int64 offset of 2^64", async () => {
    const reply = await call<string>(
      stack,
      "POST",
      "/v2/updates/get-updates-page",
      page({ beginOffsetExclusive: 2 ** 64 }),
    );
    strictEqual(reply.status, 400);
    strictEqual(
      reply.body,
      "Invalid value for: body (beginOffsetExclusive: expected an integer from -9223372036854775808 to 9223372036854775807, got number 18446744073709552000)",
    );
  });

  it("refuses an int32 page size of 3e9 and of -2^31 - 1, passes 2^31 - 1 on intact", async () => {
    for (const maxPageSize of [3e9, -(2 ** 31) - 1]) {
      const reply = await call<string>(stack, "POST", "/v2/updates/get-updates-page", page({ maxPageSize }));
      strictEqual(reply.status, 400, `maxPageSize ${maxPageSize}`);
      strictEqual(
        reply.body,
        `Invalid value for: body (maxPageSize: expected an integer from -2147483648 to 2147483647, got number ${maxPageSize})`,
      );
    }
    const largest = await call<{ cause: string }>(
      stack,
      "POST",
      "/v2/updates/get-updates-page",
      page({ maxPageSize: 2 ** 31 - 1 }),
      reader,
    );
    // The ledger sees the value itself (and has its own bound for page sizes).
    strictEqual(largest.status, 400);
    strictEqual(
      largest.body.cause,
      "The submitted request has invalid arguments: max_page_size must be between 1 and 1000, got 2147483647",
    );
  });

  it("refuses a negative value for an unsigned field", async () => {
    const reply = await call<string>(stack, "POST", "/v2/package-vetting/list", { pageSize: -1 });
    strictEqual(reply.status, 400);
    strictEqual(
      reply.body,
      "Invalid value for: body (pageSize: expected an integer from 0 to 4294967295, got number -1)",
    );
  });
});
