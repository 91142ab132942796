/** The filter for everything one party sees, without templates or interfaces named. */
export const partyFilter = (party: string) => ({ filtersByParty: { [party]: {} } });

/** An update format of the transactions `eventFormat` selects, as ACS deltas. */
export const acsDeltaFormat = (eventFormat: unknown) => ({
  includeTransactions: { eventFormat, transactionShape: "TRANSACTION_SHAPE_ACS_DELTA" },
});

/**
 * The query frame of a /v2/updates stream: the ACS deltas of `eventFormat` after `beginExclusive`,
 * open-ended unless `endInclusive` is given.
 */
export const updatesRequest = (eventFormat: unknown, beginExclusive = 0, endInclusive?: number) => ({
  beginExclusive,
  ...(endInclusive === undefined ? {} : { endInclusive }),
  updateFormat: acsDeltaFormat(eventFormat),
});
