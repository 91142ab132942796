import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { refusalClose } from "../../src/ws/refusal-close.js";

describe("refusalClose", () => {
  it("names the cause a page acts on, with 4000 + the status a non-browser client gets", () => {
    assert.deepEqual(refusalClose(401, "NA", true), { code: 4401, reason: "token expired" });
    assert.deepEqual(refusalClose(401, "UNAUTHENTICATED", false), { code: 4401, reason: "unauthenticated" });
    assert.deepEqual(refusalClose(403, "CORS_ORIGIN_NOT_ALLOWED", false), {
      code: 4403,
      reason: "forbidden origin",
    });
    assert.deepEqual(refusalClose(403, "NA", false), { code: 4403, reason: "permission denied" });
    assert.deepEqual(refusalClose(429, "MAXIMUM_NUMBER_OF_STREAMS", false), {
      code: 4429,
      reason: "over a cap",
    });
    assert.deepEqual(refusalClose(503, "SERVICE_NOT_RUNNING", false), {
      code: 4503,
      reason: "SERVICE_NOT_RUNNING",
    });
  });

  it("keeps a reason within the 123 bytes a close frame carries", () => {
    assert.deepEqual(refusalClose(404, "X".repeat(124), false), { code: 4404, reason: "refused" });
    assert.deepEqual(refusalClose(200, "ODD", false), { code: 4500, reason: "ODD" });
  });
});
