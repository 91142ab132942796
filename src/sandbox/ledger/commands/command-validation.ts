import type {
  Command__Output,
  Commands__Output,
  DisclosedContract__Output,
} from "../../../proto/ledger-api-types.js";
import { errors } from "../../errors.js";
import { partyStringError } from "../../identifiers.js";
import type { DeduplicationPeriod } from "../ledger-records.js";
import { type SubmissionIds, validateSubmissionIds } from "./submission-ids.js";

/** A submission after request validation: what the ledger needs, defaults applied. */
export interface ValidatedCommands extends SubmissionIds {
  readonly actAs: readonly string[];
  readonly readAs: readonly string[];
  readonly commands: readonly Command__Output[];
  readonly disclosedContracts: readonly DisclosedContract__Output[];
  readonly deduplication: DeduplicationPeriod;
  /** The prescribed synchronizer; empty: the ledger picks one. */
  readonly synchronizerId: string;
}

/** Canton's participant default of `ledger-api.max-deduplication-duration`: 7 days. */
const MAX_DEDUPLICATION_SECONDS = 7 * 24 * 3600;

/**
 * Validates Commands as Canton's CommandsValidator does, in its order and wording: the ids as
 * validateSubmissionIds does, the deduplication period defaults to the participant's maximum.
 */
export function validateCommands(
  commands: Commands__Output | null,
  defaultUserId: string,
): ValidatedCommands {
  if (commands === null) throw errors.missingField("commands");
  const submissionIds = validateSubmissionIds(commands, defaultUserId);
  if (commands.commands.length === 0) throw errors.missingField("commands");
  if (commands.actAs.length === 0) throw errors.missingField("act_as");
  for (const party of [...commands.actAs, ...commands.readAs]) {
    const error = partyStringError(party);
    if (error !== undefined) throw errors.invalidArgument(`Invalid party: ${error}`);
  }
  return {
    ...submissionIds,
    actAs: [...new Set(commands.actAs)],
    readAs: [...new Set(commands.readAs)].filter((p) => !commands.actAs.includes(p)),
    commands: commands.commands,
    disclosedContracts: commands.disclosedContracts,
    deduplication: deduplicationOf(commands),
    synchronizerId: commands.synchronizerId,
  };
}

/** The deduplication period of a request with Commands' deduplication fields (Commands, ExecuteSubmission*). */
export function deduplicationOf(
  commands: Pick<Commands__Output, "deduplicationPeriod" | "deduplicationOffset" | "deduplicationDuration">,
): DeduplicationPeriod {
  if (commands.deduplicationPeriod === "deduplicationOffset") {
    const offset = Number(commands.deduplicationOffset ?? "0");
    if (offset < 0) {
      throw errors.invalidField("deduplication_period", `the offset ${offset} is negative`);
    }
    return { kind: "offset", offset };
  }
  if (commands.deduplicationPeriod === "deduplicationDuration" && commands.deduplicationDuration) {
    const seconds = Number(commands.deduplicationDuration.seconds);
    const nanos = commands.deduplicationDuration.nanos;
    if (seconds < 0 || nanos < 0) {
      throw errors.invalidField("deduplication_period", "Duration must be positive");
    }
    if (seconds > MAX_DEDUPLICATION_SECONDS) {
      throw errors.invalidField(
        "deduplication_period",
        `The given deduplication duration of ${seconds}s exceeds the maximum deduplication duration of ${MAX_DEDUPLICATION_SECONDS}s`,
      );
    }
    return { kind: "duration", seconds, nanos };
  }
  return { kind: "duration", seconds: MAX_DEDUPLICATION_SECONDS, nanos: 0 };
}
