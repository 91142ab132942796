import { sampleIds } from "../sample-package/index.js";
import { formatNumeric10, parseNumeric10 } from "./numeric.js";
import {
  archiveChoice,
  type ChoiceModel,
  choiceMap,
  type InterfaceModel,
  type JsonRecord,
  parties,
  party,
  type TemplateModel,
  text,
} from "./template-model.js";

/**
 * `Iou:Iou` and its interface `Iou:Asset` (signatures in sample-package/definition.ts):
 * signatory issuer, observers owner + observers, ensure amount > 0; the owner transfers, splits,
 * merges and adds observers, each by archiving the Iou and creating its successor(s).
 */
const signatories = (a: JsonRecord) => [party(a, "issuer")];
const amount = (a: JsonRecord) => parseNumeric10(text(a, "amount"));

const successor = (
  a: JsonRecord,
  change: Partial<Record<string, string | readonly string[]>>,
): JsonRecord => ({
  ...a,
  ...(change as JsonRecord),
});

const ownerChoice = (name: string, body: ChoiceModel["body"]): ChoiceModel => ({
  name,
  consuming: true,
  controllers: (contract) => [party(contract.argument, "owner")],
  body,
});

export const iouModel: TemplateModel = {
  id: sampleIds.iou,
  signatories,
  observers: (a) => [party(a, "owner"), ...parties(a, "observers")],
  ensure: (a) => (amount(a) > 0n ? undefined : "amount > 0.0"),
  choices: choiceMap(
    ownerChoice("Transfer", (ctx, self, arg) =>
      ctx.create(sampleIds.iou, successor(self.argument, { owner: party(arg, "newOwner") })),
    ),
    ownerChoice("Split", (ctx, self, arg) => {
      const split = parseNumeric10(text(arg, "splitAmount"));
      const rest = amount(self.argument) - split;
      const splitCid = ctx.create(
        sampleIds.iou,
        successor(self.argument, { amount: formatNumeric10(split) }),
      );
      const restCid = ctx.create(sampleIds.iou, successor(self.argument, { amount: formatNumeric10(rest) }));
      return { splitCid, restCid };
    }),
    ownerChoice("Merge", (ctx, self, arg) => {
      const otherCid = text(arg, "otherCid");
      const other = ctx.fetch(otherCid, sampleIds.iou);
      ctx.assert(text(other.argument, "currency") === text(self.argument, "currency"), "currencies differ");
      ctx.exercise(otherCid, sampleIds.iou, "Archive", {});
      const total = amount(self.argument) + amount(other.argument);
      return ctx.create(sampleIds.iou, successor(self.argument, { amount: formatNumeric10(total) }));
    }),
    ownerChoice("AddObserver", (ctx, self, arg) =>
      ctx.create(
        sampleIds.iou,
        successor(self.argument, {
          observers: [...parties(self.argument, "observers"), party(arg, "newObserver")],
        }),
      ),
    ),
    archiveChoice(signatories),
  ),
  implements: [
    {
      interfaceId: sampleIds.asset,
      view: (a) => ({
        owner: party(a, "owner"),
        // Daml shows a Numeric 10 with all ten decimals.
        description: `${formatNumeric10(amount(a))} ${text(a, "currency")} issued by ${party(a, "issuer")}`,
      }),
    },
  ],
};

export const assetModel: InterfaceModel = {
  id: sampleIds.asset,
  choices: choiceMap({
    name: "Describe",
    consuming: false,
    controllers: (view) => [party(view, "owner")],
    body: (_ctx, _contract, view) => text(view, "description"),
  }),
};
