import type { StepSpec, WorkflowSpec } from "./workflow.js";

/**
 * The built-in workflows, on the sandbox's sample package (`gateway-samples`, its `Iou:Iou`: the
 * issuer signs, the owner transfers, splits, merges, and the issuer archives): each iteration
 * creates its own Iou(s) as the acting party (issuer and owner) and chains the created contract
 * ids into the next commands. Written as a scenario file would write them (placeholders and all),
 * so they run on the same runner and double as examples.
 */
const IOU = "#gateway-samples:Iou:Iou";
const WITH_TRANSACTION = "/v2/commands/submit-and-wait-for-transaction";
const AND_WAIT = "/v2/commands/submit-and-wait";

const commands = (...commands: unknown[]) => ({
  commandId: "{{commandId}}",
  userId: "{{userId}}",
  actAs: ["{{party}}"],
  commands,
});

/** A create of one Iou of the acting party, its contract id saved as `name`. */
const create = (step: string, name: string, amount = "{{decimal:100.00..1000.00}}"): StepSpec => ({
  name: step,
  method: "POST",
  path: WITH_TRANSACTION,
  body: {
    commands: commands({
      CreateCommand: {
        templateId: IOU,
        createArguments: {
          issuer: "{{party}}",
          owner: "{{party}}",
          currency: "LOAD",
          amount,
          observers: [],
        },
      },
    }),
  },
  save: { [name]: { created: "Iou:Iou", nth: 0 } },
});

/**
 * An exercise of a choice of an Iou; with names to save, of the Ious it creates (in their order),
 * it asks for the transaction, else it only waits.
 */
const exercise = (
  step: string,
  contractId: string,
  choice: string,
  choiceArgument: unknown,
  ...created: string[]
): StepSpec => {
  const exerciseCommands = commands({
    ExerciseCommand: { templateId: IOU, contractId, choice, choiceArgument },
  });
  return {
    name: step,
    method: "POST",
    path: created.length > 0 ? WITH_TRANSACTION : AND_WAIT,
    body: created.length > 0 ? { commands: exerciseCommands } : exerciseCommands,
    save: Object.fromEntries(created.map((name, nth) => [name, { created: "Iou:Iou", nth }])),
  };
};

export const IOU_WORKFLOWS: readonly WorkflowSpec[] = [
  {
    name: "iou-transfer",
    steps: [
      create("create", "iou"),
      exercise("transfer", "{{iou}}", "Transfer", { newOwner: "{{otherParty}}" }),
    ],
  },
  {
    name: "iou-split",
    steps: [
      create("create", "iou"),
      exercise("split", "{{iou}}", "Split", { splitAmount: "{{decimal:1.00..99.99}}" }),
    ],
  },
  {
    name: "iou-merge",
    steps: [
      create("create", "iou"),
      create("create-other", "other"),
      exercise("merge", "{{iou}}", "Merge", { otherCid: "{{other}}" }),
    ],
  },
  {
    // Every choice in one chain: split the new Iou, merge its two parts again, give the result away.
    name: "iou-lifecycle",
    steps: [
      create("create", "iou"),
      exercise("split", "{{iou}}", "Split", { splitAmount: "{{decimal:1.00..99.99}}" }, "part", "rest"),
      exercise("merge", "{{part}}", "Merge", { otherCid: "{{rest}}" }, "merged"),
      exercise("transfer", "{{merged}}", "Transfer", { newOwner: "{{otherParty}}" }),
    ],
  },
  {
    name: "iou-archive",
    steps: [create("create", "iou"), exercise("archive", "{{iou}}", "Archive", {})],
  },
];
