import { doesNotThrow, strictEqual } from "node:assert/strict";
import { describe, it } from "node:test";
import { CantonHttpError } from "../../src/errors/js-canton-error.js";
import { checkRequestBounds } from "../../src/ledger/request-bounds.js";
import { ledgerApiProtos } from "../../src/proto/ledger-api-protos.js";

const V2 = "com.daml.ledger.api.v2";
const type = (name: string) => ledgerApiProtos().root.lookupType(`${V2}.${name}`);

/** The JsCantonError `checkRequestBounds` throws for `request`. */
function refusal(typeName: string, request: object): CantonHttpError {
  try {
    checkRequestBounds(type(typeName), request);
  } catch (error) {
    if (error instanceof CantonHttpError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("checkRequestBounds", () => {
  it("takes identifiers up to Canton's limits and refuses one character more", () => {
    doesNotThrow(() =>
      checkRequestBounds(type("admin.AllocatePartyRequest"), { partyIdHint: "p".repeat(255) }),
    );
    strictEqual(refusal("admin.AllocatePartyRequest", { partyIdHint: "p".repeat(256) }).httpStatus, 400);
    doesNotThrow(() => checkRequestBounds(type("GetUpdateByIdRequest"), { updateId: "u".repeat(255) }));
    strictEqual(refusal("GetUpdateByIdRequest", { updateId: "u".repeat(256) }).body.code, "INVALID_ARGUMENT");
  });

  it("finds a contract id inside a Daml value of a command, and an actAs party", () => {
    const contractId = `00${"c".repeat(600)}`;
    const commands = (value: object, actAs = ["alice::1220"]) => ({
      commands: {
        commandId: "c1",
        actAs,
        commands: [
          {
            create: {
              templateId: { packageId: "p", moduleName: "M", entityName: "T" },
              createArguments: { fields: [{ label: "x", value }] },
            },
          },
        ],
      },
    });
    const inValue = refusal("SubmitAndWaitRequest", commands({ contractId }));
    strictEqual(inValue.body.code, "INVALID_FIELD");
    strictEqual(
      inValue.body.cause.startsWith(
        'The submitted command has a field with invalid value: Invalid field contract_id: cannot parse ContractId "00ccc',
      ),
      true,
    );
    strictEqual(inValue.body.cause.length, 512 + 3);
    const party = refusal("SubmitAndWaitRequest", commands({ text: "ok" }, ["a".repeat(256)]));
    strictEqual(
      party.body.cause,
      "The submitted request has invalid arguments: Daml-LF Party is too long (max: 255)",
    );
    doesNotThrow(() =>
      checkRequestBounds(type("SubmitAndWaitRequest"), commands({ text: "t".repeat(100_000) })),
    );
  });

  it("refuses an over-long user id with Canton's INVALID_FIELD", () => {
    const userId = "u".repeat(129);
    const error = refusal("admin.GetUserRequest", { userId });
    strictEqual(error.body.code, "INVALID_FIELD");
    strictEqual(
      error.body.cause,
      `The submitted command has a field with invalid value: Invalid field user_id: User ID "${userId}" does not match regex "[a-zA-Z0-9@^$.!\`\\-#+'~_|:()]{1,128}"`,
    );
  });

  it("refuses an over-long party among the keys of filtersByParty", () => {
    const error = refusal("GetActiveContractsRequest", {
      eventFormat: { filtersByParty: { ["p".repeat(256)]: {} } },
    });
    strictEqual(error.body.code, "INVALID_ARGUMENT");
  });
});
