import { sampleIds } from "../sample-package/index.js";
import { archiveChoice, choiceMap, type JsonRecord, party, type TemplateModel } from "./template-model.js";

/** `Types:AllTypes`: exists to prove every value type round-trips; Echo returns its argument. */
const signatories = (a: JsonRecord) => [party(a, "owner")];

export const allTypesModel: TemplateModel = {
  id: sampleIds.allTypes,
  signatories,
  observers: () => [],
  ensure: () => undefined,
  choices: choiceMap(
    {
      name: "Echo",
      consuming: false,
      controllers: (self) => [party(self.argument, "owner")],
      body: (_ctx, _self, arg) => arg.value ?? null,
    },
    archiveChoice(signatories),
  ),
  implements: [],
};
