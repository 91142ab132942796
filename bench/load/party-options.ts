import type { TokenFrom } from "./token-source.js";
import { UsageError } from "./usage-error.js";

/**
 * Whom the run acts as, from the command line: existing parties (`--party`, least privilege: the
 * run makes no admin call), each with its own token (`--party P=FILE`, `--party-token-command`) or
 * the run's; else parties the run allocates and grants its user the rights to (an admin's token).
 */
export interface PartyChoice {
  /** The run's own reads and preparation: --token-file/--token-command, else the first party's. */
  token: TokenFrom;
  /** Existing parties to act as (least privilege: no admin call), each with its own token or the run's. */
  parties?: { party: string; token?: TokenFrom }[];
  /** Without --party: how many parties the run allocates (and grants its user rights to). */
  prepareParties: number;
}

export function partyChoice(raw: {
  "token-file"?: string | undefined;
  "token-command"?: string | undefined;
  party?: string[] | undefined;
  "party-token-command"?: string | undefined;
  "prepare-parties"?: string | undefined;
}): PartyChoice {
  const tokenFile = raw["token-file"];
  const tokenCommand = raw["token-command"];
  if (tokenFile !== undefined && tokenCommand !== undefined)
    throw new UsageError("give one of --token-file FILE or --token-command 'CMD'");
  const main: TokenFrom | undefined =
    tokenFile !== undefined
      ? { file: tokenFile }
      : tokenCommand !== undefined
        ? { command: tokenCommand }
        : undefined;
  const partyCommand = raw["party-token-command"];
  const parties = (raw.party ?? [])
    .flatMap((value) => value.split(","))
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => {
      // Party ids have no `=` (Canton: letters, digits, `:-_ `): what follows one is a token file.
      const [party, file, extra] = item.split("=");
      if (party === "" || file === "" || extra !== undefined)
        throw new UsageError(`--party takes PARTY or PARTY=TOKEN_FILE; got '${item}'`);
      const token: TokenFrom | undefined =
        file !== undefined
          ? { file }
          : partyCommand !== undefined
            ? { command: partyCommand, party: party as string }
            : undefined;
      return { party: party as string, ...(token && { token }) };
    });
  if (new Set(parties.map((p) => p.party)).size < parties.length)
    throw new UsageError("--party names a party twice");
  if (partyCommand !== undefined && parties.length === 0)
    throw new UsageError("--party-token-command goes with --party (it is run once per party)");
  if (raw["prepare-parties"] !== undefined && parties.length > 0)
    throw new UsageError(
      "give --party (existing parties, no admin calls) or --prepare-parties N (the run allocates them), not both",
    );
  const prepareParties = raw["prepare-parties"] === undefined ? 1 : Number(raw["prepare-parties"]);
  if (!Number.isInteger(prepareParties) || prepareParties < 1 || prepareParties > 100)
    throw new UsageError(
      `--prepare-parties takes a whole number from 1 to 100; got '${raw["prepare-parties"]}'`,
    );
  const first = parties[0]?.token;
  const token = main ?? (parties.every((p) => p.token !== undefined) ? first : undefined);
  if (token === undefined)
    throw new UsageError(
      parties.length > 0
        ? "give --token-file FILE or --token-command 'CMD' for the parties without a token of their own (--party PARTY=FILE, --party-token-command)"
        : "give one of --token-file FILE or --token-command 'CMD'",
    );
  return { token, ...(parties.length > 0 && { parties }), prepareParties };
}
