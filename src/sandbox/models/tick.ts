import { sampleIds } from "../sample-package/index.js";
import { archiveChoice, choiceMap, type JsonRecord, party, type TemplateModel } from "./template-model.js";

/** `Bench:Tick`: the benchmark contract; its payload's size sets the event size. */
const signatories = (a: JsonRecord) => [party(a, "owner")];

export const tickModel: TemplateModel = {
  id: sampleIds.tick,
  signatories,
  observers: () => [],
  ensure: () => undefined,
  choices: choiceMap(archiveChoice(signatories)),
  implements: [],
};
