import type { JsonValue } from "../../lf/index.js";
import { sampleIds } from "../sample-package/index.js";
import { formatNumeric10, parseNumeric10 } from "./numeric.js";
import {
  archiveChoice,
  choiceMap,
  type JsonRecord,
  party,
  type TemplateModel,
  text,
} from "./template-model.js";

/**
 * `Account:Account`: keyed by {bank, number} with the bank as maintainer; the holder deposits
 * (consuming, a new Account with the higher balance) and reads the balance (nonconsuming).
 */
const signatories = (a: JsonRecord) => [party(a, "bank")];

export const accountModel: TemplateModel = {
  id: sampleIds.account,
  signatories,
  observers: (a) => [party(a, "holder")],
  ensure: () => undefined,
  key: {
    key: (a) => ({ bank: party(a, "bank"), number: text(a, "number") }),
    maintainers: (key: JsonValue) => [party(key as JsonRecord, "bank")],
  },
  choices: choiceMap(
    {
      name: "Deposit",
      consuming: true,
      controllers: (self) => [party(self.argument, "holder")],
      body: (ctx, self, arg) => {
        const balance = parseNumeric10(text(self.argument, "balance")) + parseNumeric10(text(arg, "amount"));
        return ctx.create(sampleIds.account, { ...self.argument, balance: formatNumeric10(balance) });
      },
    },
    {
      name: "GetBalance",
      consuming: false,
      controllers: (self) => [party(self.argument, "holder")],
      body: (_ctx, self) => text(self.argument, "balance"),
    },
    archiveChoice(signatories),
  ),
  implements: [],
};
